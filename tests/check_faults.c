/* Regressions for contract breaks found by an outside attack (suite "faults").
 * The contract (include/ebm.h): a call returns, and either succeeds with
 * valid, finite results or fails with a documented code, a message, and
 * nothing the caller can see changed (parameters, states, outputs, the
 * generator's state, an estimator's chains and statistics).
 *
 *  1. coupled Gibbs steps that looped forever on huge weights (the residual
 *     acceptance log-ratio cancelled to 0), and UCD gradients that never
 *     returned;
 *  2. a hang guard: every sampler, estimator and evaluation call on small
 *     models with weights and biases of magnitude 1e10 .. 3e38;
 *  3. AIS that moved the generator when it failed;
 *  4. the loader blocking on a FIFO, and loads and saves of paths that are
 *     not regular files;
 *  5. EBM_OK with NaN or infinite results at weights near FLT_MAX;
 *  6. messages that do not state the rule that was broken.
 *
 * Calls that may hang run in a child process (bounded()) that kills itself
 * with alarm() at its deadline: a hang becomes a failure naming the call
 * that was running, also under CK_FORK=no (valgrind), where Check's own
 * timeouts do not apply. Checks are soft (tests.h; the child's come back
 * through a pipe): every broken promise is printed to stderr
 * (check_faults.c:LINE: ...) and the test fails at its end with the first
 * one. */
#define _XOPEN_SOURCE 700 /* mknod: a copy of /dev/full in a temporary directory */
#include "tests.h"
#include "testing.h" /* ebm__set_residual_try_limit */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* EBM_ESTIMATOR_STEP_LIMIT (int >= 1, default 1000000): a row whose coupled
 * chains have not met after that many steps fails the whole call with
 * EBM_ELIMIT. */
#define T_STEP_LIMIT EBM_ESTIMATOR_STEP_LIMIT

/* 1 if hay contains any of the NULL-terminated needles. */
static int contains_any(const char *hay, const char *const *needles)
{
    for (; *needles != NULL; needles++) {
        if (t_contains(hay, *needles)) {
            return 1;
        }
    }
    return 0;
}

/* ---- bounded(): a body in a child process with a deadline ---------------- */

typedef void (*body_fn)(void *arg);

/* base seconds, scaled for slow runs: CK_TIMEOUT_MULTIPLIER, valgrind (its
 * preload library is in LD_PRELOAD), AddressSanitizer. */
static unsigned deadline(unsigned base)
{
    double k = 1.0;
    const char *mult = getenv("CK_TIMEOUT_MULTIPLIER");
    if (mult != NULL && atof(mult) > 1.0) {
        k *= atof(mult);
    }
    const char *pre = getenv("LD_PRELOAD");
    if (pre != NULL && strstr(pre, "vgpreload") != NULL) {
        k *= 40.0;
    }
#ifdef T_ASAN
    k *= 4.0;
#endif
    return (unsigned)((double)base * k + 0.5);
}

/* Run body(arg) in a child that dies by SIGALRM after deadline(seconds).
 * The child's soft failures come back through a pipe; a hang, a crash or an
 * early exit is a failure of the test naming the last call started. The
 * body must not use ck_assert (under CK_FORK=no that would jump back into
 * the runner inside the child) and must free what it allocates (valgrind
 * checks the child's leaks too). */
static void bounded(const char *what, unsigned seconds, body_fn body, void *arg)
{
    const unsigned limit = deadline(seconds);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        t_soft_to_pipe(fds[1]);
        signal(SIGALRM, SIG_DFL);
        alarm(limit);
        body(arg);
        t_soft_child_done();
        _exit(0);
    }
    close(fds[1]);
    char last[220] = "(nothing started)";
    int done = 0;
    size_t have = 0;
    char buf[4096];
    for (;;) {
        ssize_t k = read(fds[0], buf + have, sizeof buf - 1 - have);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            break;
        }
        have += (size_t)k;
        buf[have] = '\0';
        char *start = buf, *nl;
        while ((nl = strchr(start, '\n')) != NULL) {
            *nl = '\0';
            if (strcmp(start, "@@done") == 0) {
                done = 1;
            } else if (start[0] == '@') {
                snprintf(last, sizeof last, "%s", start + 1);
            } else {
                t_soft_record(start);
            }
            start = nl + 1;
        }
        have = strlen(start);
        memmove(buf, start, have);
        if (have == sizeof buf - 1) { /* a line longer than the buffer */
            buf[have] = '\0';
            t_soft_record(buf);
            have = 0;
        }
    }
    close(fds[0]);
    int status = 0;
    pid_t w;
    do {
        w = waitpid(pid, &status, 0);
    } while (w < 0 && errno == EINTR);
    ck_assert_int_eq(w, pid);
    char text[600];
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
        snprintf(text, sizeof text,
                 "check_faults.c: %s: did not return within %u s (hang); running: %s", what, limit,
                 last);
        t_soft_record(text);
    } else if (WIFSIGNALED(status)) {
        snprintf(text, sizeof text, "check_faults.c: %s: crashed (signal %d) during: %s", what,
                 WTERMSIG(status), last);
        t_soft_record(text);
    } else if (!done || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(text, sizeof text,
                 "check_faults.c: %s: the child ended badly (status 0x%x, finished %d) after: %s",
                 what, (unsigned)status, done, last);
        t_soft_record(text);
    }
}

/* ---- models, states and their validity (no ck_assert: used in children) -- */

static ebm_model_t *mk(int64_t n_layers, const int64_t *sizes, int visible, int hidden)
{
    ebm_model_t *m = NULL;
    char err[256] = "";
    int rc = ebm_model_create(&m, n_layers, sizes, visible, hidden, err, sizeof err);
    CHECK(rc == EBM_OK, "ebm_model_create: %s", err);
    return rc == EBM_OK ? m : NULL;
}

static const char *units_name(int u)
{
    return u == EBM_UNITS_BINARY ? "binary" : u == EBM_UNITS_SPIN ? "spin" : "gaussian";
}

/* The kind of parameter i: EBM_PARAM_WEIGHT, _BIAS or _LOGVAR. */
static int param_kind(const ebm_model_t *m, int64_t i)
{
    int64_t off, rows, cols;
    if (ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &off, &rows, &cols) == EBM_OK &&
        i >= off && i < off + rows * cols) {
        return EBM_PARAM_LOGVAR;
    }
    if (ebm_model_param_block(m, EBM_PARAM_BIAS, 0, &off, NULL, NULL) == EBM_OK && i >= off) {
        return EBM_PARAM_BIAS;
    }
    return EBM_PARAM_WEIGHT;
}

/* Fill one parameter block with v. */
static void set_block(const ebm_model_t *m, float *p, int kind, int64_t l, float v)
{
    int64_t off, rows, cols;
    if (ebm_model_param_block(m, kind, l, &off, &rows, &cols) == EBM_OK) {
        for (int64_t i = 0; i < rows * cols; i++) {
            p[off + i] = v;
        }
    }
}

static float *params_alloc(const ebm_model_t *m)
{
    int64_t np = ebm_model_param_count(m);
    float *p = calloc((size_t)(np > 0 ? np : 1), sizeof *p);
    CHECK(p != NULL, "out of memory");
    return p;
}

static int set_params(ebm_model_t *m, const float *p)
{
    int rc = ebm_model_set_params(m, p);
    CHECK(rc == EBM_OK, "ebm_model_set_params: %s", ebm_model_errmsg(m));
    return rc;
}

/* Every weight and bias (Gaussian means included) at magnitude mag:
 * pattern 0 random signs from seed, pattern 1 weights +mag and biases -mag.
 * Log-variances in [-30, 30], both ends included. */
static int set_magnitude(ebm_model_t *m, uint64_t seed, int pattern, double mag)
{
    int64_t np = ebm_model_param_count(m);
    float *p = params_alloc(m);
    if (p == NULL) {
        return EBM_ENOMEM;
    }
    for (int64_t i = 0; i < np; i++) {
        double u = t_uniform(&seed);
        int kind = param_kind(m, i);
        if (kind == EBM_PARAM_LOGVAR) {
            p[i] = i % 3 == 0 ? -30.0f : i % 3 == 1 ? 30.0f : (float)(60.0 * u - 30.0);
        } else if (pattern == 0) {
            p[i] = (float)(u < 0.5 ? -mag : mag);
        } else {
            p[i] = (float)(kind == EBM_PARAM_WEIGHT ? mag : -mag);
        }
    }
    int rc = set_params(m, p);
    free(p);
    return rc;
}


/* Starting means: 1/2 for binary, 0 for spin, data for Gaussian. */
static void fill_means(const ebm_model_t *m, int64_t n, float *mu, int64_t ld, uint64_t seed)
{
    t_fill_states(m, n, mu, ld, seed);
    for (int64_t r = 0; r < n; r++) {
        for (int64_t l = 1; l < ebm_model_num_layers(m); l++) {
            int64_t off = ebm_model_layer_offset(m, l);
            for (int64_t j = 0; j < ebm_model_layer_size(m, l); j++) {
                mu[r * ld + off + j] = ebm_model_layer_units(m, l) == EBM_UNITS_SPIN ? 0.0f : 0.5f;
            }
        }
    }
}

/* Layer l of n rows (l < 0: every layer) holds valid states (mean = 0) or
 * valid means (mean = 1). Reports the first bad value. */
static int rows_ok(const ebm_model_t *m, int64_t l_only, int64_t n, const float *x, int64_t ld,
                   int mean, const char *name)
{
    for (int64_t r = 0; r < n; r++) {
        for (int64_t l = 0; l < ebm_model_num_layers(m); l++) {
            if (l_only >= 0 && l != l_only) {
                continue;
            }
            int64_t off = ebm_model_layer_offset(m, l);
            for (int64_t j = 0; j < ebm_model_layer_size(m, l); j++) {
                float v = x[r * ld + off + j];
                if (!t_unit_ok(ebm_model_layer_units(m, l), v, mean)) {
                    T_SOFT_FAIL("%s: row %lld, layer %lld (%s), unit %lld is %g", name,
                                (long long)r, (long long)l, units_name(ebm_model_layer_units(m, l)),
                                (long long)j, (double)v);
                    return 0;
                }
            }
        }
    }
    return 1;
}

/* The l-th layer's n rows in a compact n x n_l buffer. */
static int layer_ok(const ebm_model_t *m, int64_t l, int64_t n, const float *a, int mean,
                    const char *name)
{
    int64_t nl = ebm_model_layer_size(m, l);
    for (int64_t r = 0; r < n; r++) {
        for (int64_t j = 0; j < nl; j++) {
            if (!t_unit_ok(ebm_model_layer_units(m, l), a[r * nl + j], mean)) {
                T_SOFT_FAIL("%s: row %lld, unit %lld of layer %lld is %g", name, (long long)r,
                            (long long)j, (long long)l, (double)a[r * nl + j]);
                return 0;
            }
        }
    }
    return 1;
}

static int finite_f(const float *p, int64_t n, const char *name)
{
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(p[i])) {
            T_SOFT_FAIL("%s[%lld] is %g", name, (long long)i, (double)p[i]);
            return 0;
        }
    }
    return 1;
}

static int finite_d(const double *p, int64_t n, const char *name)
{
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(p[i])) {
            T_SOFT_FAIL("%s[%lld] is %g", name, (long long)i, p[i]);
            return 0;
        }
    }
    return 1;
}

static int rows_equal(const float *a, const float *b, int64_t w)
{
    return memcmp(a, b, (size_t)w * sizeof *a) == 0;
}

/* ---- snapshots: what a failed call must leave alone ---------------------- */

/* Watch m, r and e (each may be NULL); add buffers with t_snap_track, then
 * compare with t_snap_same. */
static void snap_begin(t_snap *s, const ebm_model_t *m, ebm_rng_t *r, const ebm_estimator_t *e)
{
    t_snap_init(s, T_MSG_NONE, m, r);
    s->e = e;
    t_snap_take(s);
}

#define BIT(code) (1u << (unsigned)(-(code)))
#define FAIL_VALUE BIT(EBM_EVALUE)
#define FAIL_LIMIT (BIT(EBM_EVALUE) | BIT(EBM_ELIMIT))

/* The verdict on one call with valid arguments: success (rc >= 0: EBM_OK or
 * a count) needs valid outputs (valid, computed after the call); a failure
 * needs an allowed code, a message, and nothing in s changed. */
static void judge(const t_snap *s, int line, const char *call, int rc, unsigned allowed,
                  const char *msg, int valid)
{
    if (rc >= 0) {
        if (!valid) {
            t_soft_fail_at(__FILE__, line,
                           "%s returned %d (success) with invalid or non-finite results (above)",
                           call, rc);
        }
        return;
    }
    if (rc < -30 || !(allowed & BIT(rc))) {
        t_soft_fail_at(__FILE__, line,
                       "%s returned %s (%d), not an allowed outcome here; message \"%s\"", call,
                       ebm_error_name(rc), rc, msg != NULL ? msg : "(null)");
    }
    if (msg == NULL || msg[0] == '\0') {
        t_soft_fail_at(__FILE__, line, "%s failed with %s but left no message", call,
                       ebm_error_name(rc));
    }
    t_snap_same(s, __FILE__, line, call);
}

/* rc_ = call; valid is evaluated only after a success. */
#define JUDGE(s, allowed, msg, call, valid)                                                     \
    do {                                                                                        \
        int rc_ = (int)(call);                                                                  \
        judge((s), __LINE__, #call, rc_, (allowed), (msg), rc_ >= 0 ? (valid) : 1);             \
    } while (0)

/* ======================================================================== */
/* 1. The coupled Gibbs step and UCD must return on huge weights             */
/* ======================================================================== */

/* A GIBBS (with a coupling) or MH_UNIFORM sampler; clamp: layers held. */
static ebm_sampler_t *mk_sampler(ebm_model_t *m, int kind, int coupling, int clamp)
{
    ebm_sampler_t *s = NULL;
    if (ebm_sampler_create(&s, m, kind) != EBM_OK) {
        T_SOFT_FAIL("ebm_sampler_create: %s", ebm_model_errmsg(m));
        return NULL;
    }
    if (kind == EBM_SAMPLER_GIBBS) {
        CHECK(ebm_sampler_set_int(s, EBM_SAMPLER_COUPLING, coupling) == EBM_OK, "set coupling");
    }
    if (clamp != 0) {
        CHECK(ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, clamp) == EBM_OK, "set clamp");
    }
    return s;
}

/* One coupled step of n rows of x and y (stride w): EBM_OK with valid
 * states and met[r] == (x_r == y_r), or a documented failure with x, y,
 * met and the generator unchanged. */
static void coupled_once(ebm_sampler_t *s, ebm_model_t *m, ebm_rng_t *r, int64_t n, float *x,
                         float *y)
{
    if (s == NULL) {
        return;
    }
    const int64_t w = ebm_model_state_width(m);
    uint8_t met[8];
    memset(met, 0xA5, sizeof met);
    t_snap sn;
    snap_begin(&sn, m, r, NULL);
    t_snap_track(&sn, "x", x, (size_t)(n * w) * sizeof *x);
    t_snap_track(&sn, "y", y, (size_t)(n * w) * sizeof *y);
    t_snap_track(&sn, "met", met, sizeof met);
    int rc = ebm_sampler_coupled_step(s, r, n, x, w, y, w, met);
    int valid = 1;
    if (rc >= 0) {
        valid = rows_ok(m, -1, n, x, w, 0, "x") && rows_ok(m, -1, n, y, w, 0, "y");
        for (int64_t i = 0; i < n && valid; i++) {
            if (met[i] != rows_equal(x + i * w, y + i * w, w)) {
                T_SOFT_FAIL("met[%lld] is %d", (long long)i, met[i]);
                valid = 0;
            }
        }
        double tries = ebm_sampler_stat(s, EBM_STAT_TRIES_MAX);
        CHECK(isfinite(tries) && tries >= 0, "EBM_STAT_TRIES_MAX is %g", tries);
    }
    judge(&sn, __LINE__, "ebm_sampler_coupled_step", rc, FAIL_LIMIT, ebm_sampler_errmsg(s),
          valid);
}

/* Every ordered pair of distinct states of a model with w <= 4 units, one
 * coupled step each, under the three couplings. */
static void all_pairs(ebm_model_t *m, ebm_rng_t *r, const char *what)
{
    const int64_t w = ebm_model_state_width(m);
    const int spin = ebm_model_layer_units(m, 0) == EBM_UNITS_SPIN;
    for (int c = EBM_COUPLING_MAXIMAL; c <= EBM_COUPLING_BLOCKWISE; c++) {
        ebm_sampler_t *s = mk_sampler(m, EBM_SAMPLER_GIBBS, c, 0);
        for (int a = 0; a < (1 << w); a++) {
            for (int b = 0; b < (1 << w); b++) {
                if (a == b) {
                    continue;
                }
                float x[4], y[4];
                for (int64_t j = 0; j < w; j++) {
                    x[j] = (a >> j & 1) ? 1.0f : (spin ? -1.0f : 0.0f);
                    y[j] = (b >> j & 1) ? 1.0f : (spin ? -1.0f : 0.0f);
                }
                t_soft_context("%s, %s coupling, x = state %d, y = state %d", what,
                               t_coupling_name(c), a, b);
                coupled_once(s, m, r, 1, x, y);
            }
        }
        ebm_sampler_destroy(s);
    }
}

/* Proves: a 1x1 binary RBM with W = 1e16, x = (0, 0), y = (0, 1): the
 * residual acceptance log-ratio -(1e16 - log 2) + 1e16 rounded to 0, so y's
 * rejection loop could never accept and the call never returned. Now it
 * returns (EBM_OK with valid states, or a documented error), under both
 * couplings, for that pair and every other pair of distinct states. */
static void body_coupled_binary(void *arg)
{
    (void)arg;
    const int64_t sizes[2] = {1, 1};
    ebm_model_t *m = mk(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    ebm_rng_t *r = t_rng_started(1, 3, 1);
    float *p = m != NULL ? params_alloc(m) : NULL;
    if (m == NULL || r == NULL || p == NULL) {
        goto out;
    }
    set_block(m, p, EBM_PARAM_WEIGHT, 1, 1e16f);
    if (set_params(m, p) != EBM_OK) {
        goto out;
    }
    for (int c = EBM_COUPLING_MAXIMAL; c <= EBM_COUPLING_BLOCKWISE; c++) {
        float x[2] = {0.0f, 0.0f}, y[2] = {0.0f, 1.0f};
        t_soft_context("1x1 binary RBM, W = 1e16, x = (0,0), y = (0,1), %s coupling",
                       t_coupling_name(c));
        ebm_sampler_t *s = mk_sampler(m, EBM_SAMPLER_GIBBS, c, 0);
        coupled_once(s, m, r, 1, x, y);
        ebm_sampler_destroy(s);
    }
    all_pairs(m, r, "1x1 binary RBM, W = 1e16");
out:
    free(p);
    ebm_rng_destroy(r);
    ebm_model_destroy(m);
}

/* Proves: the same hang on ±1 spin units, where each log-ratio term is
 * about 2e20: a 2x2 spin RBM with weights of 1e20 (three sign patterns),
 * every pair of distinct states, the three couplings. */
static void body_coupled_spin(void *arg)
{
    (void)arg;
    const int64_t sizes[2] = {2, 2};
    ebm_model_t *m = mk(2, sizes, EBM_UNITS_SPIN, EBM_UNITS_SPIN);
    ebm_rng_t *r = t_rng_started(2, 3, 1);
    float *p = m != NULL ? params_alloc(m) : NULL;
    if (m == NULL || r == NULL || p == NULL) {
        goto out;
    }
    static const float signs[3][4] = {{1, 1, 1, 1}, {1, -1, -1, 1}, {-1, 1, 1, 1}};
    for (int k = 0; k < 3; k++) {
        int64_t off;
        (void)ebm_model_param_block(m, EBM_PARAM_WEIGHT, 1, &off, NULL, NULL);
        memset(p, 0, (size_t)ebm_model_param_count(m) * sizeof *p);
        for (int i = 0; i < 4; i++) {
            p[off + i] = signs[k][i] * 1e20f;
        }
        if (set_params(m, p) != EBM_OK) {
            goto out;
        }
        char what[64];
        snprintf(what, sizeof what, "2x2 spin RBM, W = 1e20 x pattern %d", k);
        all_pairs(m, r, what);
    }
out:
    free(p);
    ebm_rng_destroy(r);
    ebm_model_destroy(m);
}

/* One gradient call with valid data: EBM_OK with a finite gradient, or
 * EBM_ELIMIT / EBM_EVALUE with grad, the generator, and the estimator's
 * chains and statistics unchanged. */
static void gradient_once(ebm_estimator_t *e, ebm_model_t *m, ebm_rng_t *r, int64_t n,
                          const float *data, int64_t ldd)
{
    int64_t np = ebm_model_param_count(m);
    float *grad = malloc((size_t)np * sizeof *grad);
    if (grad == NULL) {
        return;
    }
    memset(grad, 0xA5, (size_t)np * sizeof *grad);
    t_snap sn;
    snap_begin(&sn, m, r, e);
    t_snap_track(&sn, "grad", grad, (size_t)np * sizeof *grad);
    t_snap_track(&sn, "data", data, (size_t)(n * ldd) * sizeof *data);
    JUDGE(&sn, FAIL_LIMIT, ebm_estimator_errmsg(e),
          ebm_estimator_gradient(e, r, n, data, ldd, grad), finite_f(grad, np, "grad"));
    free(grad);
}

/* Proves: UCD with default options (so the default step limit, 10^6) on a
 * 5x4 binary RBM with weights ±M (M = 1e18, 1e20, 1e25, 1e30; random signs,
 * three sign patterns) and with weights of random magnitudes in 1e18..1e30
 * returns: EBM_OK with a finite gradient, or EBM_ELIMIT / EBM_EVALUE with
 * nothing changed. Before the fix the ±M cases never returned (equal
 * magnitudes cancel to an input of exactly 0 in one chain and not in the
 * other: the residual loop of the coupled step). */
static void body_ucd_huge(void *arg)
{
    (void)arg;
    const int64_t sizes[2] = {5, 4};
    ebm_model_t *m = mk(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    float *p = m != NULL ? params_alloc(m) : NULL;
    if (m == NULL || p == NULL) {
        goto out;
    }
    static const double mags[5] = {1e18, 1e20, 1e25, 1e30, 0.0 /* 10^U(18, 30) */};
    static const uint64_t seeds[3] = {1, 2, 6};
    int64_t off, nr, nc;
    (void)ebm_model_param_block(m, EBM_PARAM_WEIGHT, 1, &off, &nr, &nc);
    for (int k = 0; k < 5; k++) {
        for (int j = 0; j < 3; j++) {
            uint64_t seed = seeds[j];
            for (int64_t i = 0; i < nr * nc; i++) {
                double mag = mags[k] > 0 ? mags[k] : pow(10.0, 18.0 + 12.0 * t_uniform(&seed));
                p[off + i] = (float)(t_uniform(&seed) < 0.5 ? -mag : mag);
            }
            ebm_estimator_t *e = NULL;
            ebm_rng_t *r = t_rng_started(3, 3, 1);
            if (r != NULL && set_params(m, p) == EBM_OK &&
                ebm_estimator_create(&e, m, EBM_ESTIMATOR_UCD) == EBM_OK) {
                float data[4 * 9];
                t_fill_states(m, 4, data, 9, 5);
                char mag[32] = "10^U(18,30)";
                if (mags[k] > 0) {
                    snprintf(mag, sizeof mag, "%g", mags[k]);
                }
                t_soft_context("UCD, default options, 5x4 binary RBM, weights +-%s, sign seed %llu",
                               mag, (unsigned long long)seeds[j]);
                gradient_once(e, m, r, 4, data, 9);
            } else {
                T_SOFT_FAIL("set-up failed: %s", ebm_model_errmsg(m));
            }
            ebm_estimator_destroy(e);
            ebm_rng_destroy(r);
        }
    }
out:
    free(p);
    ebm_model_destroy(m);
}

/* Proves: EBM_ESTIMATOR_STEP_LIMIT exists, takes ints >= 1,
 * and stops chains that can never meet: a 2x1 spin RBM with W = (1e30,
 * 1e30)^T and data v = (+1, -1), whose hidden unit has input 0 (h is a fair
 * coin) and then locks: each chain stays at (h, h, h) forever, so chains
 * that drew different h never meet. UCD (limit 2000) must return
 * EBM_ELIMIT with nothing changed (or EBM_OK if every row happened to
 * meet), rather than loop forever as it did before the option existed. */
static void body_step_limit(void *arg)
{
    (void)arg;
    const int64_t sizes[2] = {2, 1};
    ebm_model_t *m = mk(2, sizes, EBM_UNITS_SPIN, EBM_UNITS_SPIN);
    ebm_rng_t *r = t_rng_started(4, 3, 1);
    float *p = m != NULL ? params_alloc(m) : NULL;
    ebm_estimator_t *e = NULL;
    if (m == NULL || r == NULL || p == NULL) {
        goto out;
    }
    set_block(m, p, EBM_PARAM_WEIGHT, 1, 1e30f);
    if (set_params(m, p) != EBM_OK ||
        ebm_estimator_create(&e, m, EBM_ESTIMATOR_UCD) != EBM_OK) {
        T_SOFT_FAIL("set-up failed: %s", ebm_model_errmsg(m));
        goto out;
    }
    t_soft_context("UCD: EBM_ESTIMATOR_STEP_LIMIT (option %d) values", T_STEP_LIMIT);
    int rc = ebm_estimator_set_int(e, T_STEP_LIMIT, 0);
    CHECK(rc == EBM_EVALUE, "set_int(STEP_LIMIT, 0) returned %s; the limit is >= 1",
          ebm_error_name(rc));
    rc = ebm_estimator_set_int(e, T_STEP_LIMIT, 2000);
    CHECK(rc == EBM_OK, "set_int(STEP_LIMIT, 2000) returned %s: \"%s\"", ebm_error_name(rc),
          ebm_estimator_errmsg(e));
    float data[8 * 2];
    for (int i = 0; i < 8; i++) {
        data[2 * i] = 1.0f;
        data[2 * i + 1] = -1.0f;
    }
    int64_t np = ebm_model_param_count(m);
    float grad[8];
    memset(grad, 0xA5, sizeof grad);
    t_snap sn;
    snap_begin(&sn, m, r, e);
    t_snap_track(&sn, "grad", grad, (size_t)np * sizeof *grad);
    t_soft_context("UCD with STEP_LIMIT 2000 on chains that cannot meet");
    rc = ebm_estimator_gradient(e, r, 8, data, 2, grad);
    judge(&sn, __LINE__, "ebm_estimator_gradient(chains that cannot meet)", rc,
          BIT(EBM_ELIMIT), ebm_estimator_errmsg(e), rc >= 0 ? finite_f(grad, np, "grad") : 1);
    if (rc == EBM_ELIMIT) {
        const char *msg = ebm_estimator_errmsg(e);
        static const char *const words[] = {"2000", "limit", "step", NULL};
        CHECK(contains_any(msg, words), "EBM_ELIMIT message \"%s\" names neither the limit nor "
              "the steps", msg);
    }
out:
    ebm_estimator_destroy(e);
    free(p);
    ebm_rng_destroy(r);
    ebm_model_destroy(m);
}

START_TEST(coupled_gibbs_binary_1e16)
{
    bounded("coupled Gibbs, 1x1 binary RBM, W = 1e16", 3, body_coupled_binary, NULL);
    FINISH();
}
END_TEST

START_TEST(coupled_gibbs_spin_1e20)
{
    bounded("coupled Gibbs, 2x2 spin RBM, W = 1e20", 3, body_coupled_spin, NULL);
    FINISH();
}
END_TEST

START_TEST(ucd_default_options_huge_weights)
{
    bounded("UCD gradient, 5x4 RBM, weights 1e18..1e30", 5, body_ucd_huge, NULL);
    FINISH();
}
END_TEST

START_TEST(ucd_step_limit_stops_chains_that_never_meet)
{
    bounded("UCD gradient with STEP_LIMIT 2000, chains that never meet", 5, body_step_limit,
            NULL);
    FINISH();
}
END_TEST

/* ======================================================================== */
/* 2. Hang guard: every sampler and estimator kind at huge magnitudes        */
/* ======================================================================== */

typedef struct guard {
    int n_layers;
    int64_t sizes[3];
    int visible, hidden;
    int family; /* 0: conditionals, search, evaluation, single steps; 1: coupled, estimators */
} guard;

enum { GN = 3 }; /* rows per call */

static void guard_samplers(ebm_model_t *m, ebm_rng_t *r, const char *tag)
{
    const int64_t w = ebm_model_state_width(m);
    const int gauss = ebm_model_layer_units(m, 0) == EBM_UNITS_GAUSSIAN;
    const int grbm = gauss && ebm_model_num_layers(m) == 2;
    float *x = malloc((size_t)(GN * w) * sizeof *x);
    if (x == NULL) {
        return;
    }
    static const char *const names[4] = {"GIBBS", "MH_UNIFORM", "LANGEVIN", "GIBBS_LANGEVIN"};
    for (int kind = 0; kind < 4; kind++) {
        if (kind >= EBM_SAMPLER_LANGEVIN && !grbm) {
            continue;
        }
        t_soft_context("%s: ebm_sampler_step %s", tag, names[kind]);
        ebm_sampler_t *s = NULL;
        if (ebm_sampler_create(&s, m, kind) != EBM_OK) {
            T_SOFT_FAIL("ebm_sampler_create: %s", ebm_model_errmsg(m));
            continue;
        }
        if (kind == EBM_SAMPLER_MH_UNIFORM && gauss) {
            /* MH_UNIFORM moves discrete layers only: clamp the Gaussian one. */
            CHECK(ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, 1) == EBM_OK, "clamp");
        }
        t_fill_states(m, GN, x, w, 17 + (uint64_t)kind);
        t_snap sn;
        snap_begin(&sn, m, r, NULL);
        t_snap_track(&sn, "x", x, (size_t)(GN * w) * sizeof *x);
        JUDGE(&sn, FAIL_VALUE, ebm_sampler_errmsg(s), ebm_sampler_step(s, r, GN, x, w),
              rows_ok(m, -1, GN, x, w, 0, "x"));
        ebm_sampler_destroy(s);
    }
    free(x);
}

static void guard_coupled(ebm_model_t *m, ebm_rng_t *r, const char *tag)
{
    const int64_t w = ebm_model_state_width(m);
    const int gauss = ebm_model_layer_units(m, 0) == EBM_UNITS_GAUSSIAN;
    float *x = malloc((size_t)(2 * GN * w) * sizeof *x);
    if (x == NULL) {
        return;
    }
    float *y = x + GN * w;
    static const char *const names[4] = {"GIBBS MAXIMAL", "GIBBS CRN", "GIBBS BLOCKWISE",
                                         "MH_UNIFORM"};
    for (int k = 0; k < 4; k++) {
        t_soft_context("%s: ebm_sampler_coupled_step %s", tag, names[k]);
        t_fill_states(m, GN, x, w, 23 + (uint64_t)k);
        t_fill_states(m, GN, y, w, 31 + (uint64_t)k);
        memcpy(y + (GN - 1) * w, x + (GN - 1) * w, (size_t)w * sizeof *x); /* met on entry */
        if (rows_equal(x, y, w)) {
            y[0] = ebm_model_layer_units(m, 0) == EBM_UNITS_SPIN ? -y[0]
                   : gauss                                         ? y[0] + 1.0f
                                                                   : 1.0f - y[0];
        }
        ebm_sampler_t *s = mk_sampler(m, k < 3 ? EBM_SAMPLER_GIBBS : EBM_SAMPLER_MH_UNIFORM,
                                      k < 3 ? k : EBM_COUPLING_CRN, k == 3 && gauss ? 1 : 0);
        coupled_once(s, m, r, GN, x, y);
        ebm_sampler_destroy(s);
    }
    free(x);
}

/* Every estimator kind the model takes; UCD and UCD_LMI with a step limit
 * of 2000 (ints >= 1). */
static void guard_estimators(ebm_model_t *m, ebm_rng_t *r, const char *tag)
{
    const int64_t w = ebm_model_state_width(m);
    const int gauss = ebm_model_layer_units(m, 0) == EBM_UNITS_GAUSSIAN;
    const int grbm = gauss && ebm_model_num_layers(m) == 2;
    float *data = malloc((size_t)(2 * GN * w) * sizeof *data);
    if (data == NULL) {
        return;
    }
    float *chains = data + GN * w;
    t_fill_states(m, GN, data, w, 41);
    static const char *const names[5] = {"CD", "PCD", "UCD", "UCD_LMI", "GRBM_CD"};
    static const int order[5] = {EBM_ESTIMATOR_CD, EBM_ESTIMATOR_PCD, EBM_ESTIMATOR_GRBM_CD,
                                 EBM_ESTIMATOR_UCD_LMI, EBM_ESTIMATOR_UCD};
    for (int i = 0; i < 5; i++) {
        const int kind = order[i];
        if ((kind == EBM_ESTIMATOR_GRBM_CD && !grbm) || (kind == EBM_ESTIMATOR_UCD_LMI && gauss)) {
            continue; /* EBM_EUNSUPPORTED by the contract */
        }
        t_soft_context("%s: ebm_estimator_gradient %s", tag, names[kind]);
        ebm_estimator_t *e = NULL;
        if (ebm_estimator_create(&e, m, kind) != EBM_OK) {
            T_SOFT_FAIL("ebm_estimator_create: %s", ebm_model_errmsg(m));
            continue;
        }
        if (kind == EBM_ESTIMATOR_UCD || kind == EBM_ESTIMATOR_UCD_LMI) {
            int rc = ebm_estimator_set_int(e, T_STEP_LIMIT, 2000);
            CHECK(rc == EBM_OK, "set_int(EBM_ESTIMATOR_STEP_LIMIT = %d, 2000) returned %s: \"%s\"",
                  T_STEP_LIMIT, ebm_error_name(rc), ebm_estimator_errmsg(e));
        }
        if (kind == EBM_ESTIMATOR_PCD) {
            t_fill_states(m, GN, chains, w, 43);
            CHECK(ebm_estimator_set_chains(e, GN, chains, w) == EBM_OK, "set_chains: %s",
                  ebm_estimator_errmsg(e));
        }
        gradient_once(e, m, r, GN, data, w);
        ebm_estimator_destroy(e);
    }
    free(data);
}

/* Conditionals, local search, mean field, the bound and AIS. */
static void guard_single(ebm_model_t *m, ebm_rng_t *r, const char *tag)
{
    const int64_t w = ebm_model_state_width(m), L1 = ebm_model_num_layers(m);
    float *x = malloc((size_t)(GN * w) * sizeof *x);
    float *a = malloc((size_t)(GN * w) * sizeof *a);
    uint8_t *clamp = calloc((size_t)w, 1);
    if (x == NULL || a == NULL || clamp == NULL) {
        goto out;
    }
    for (int64_t l = 0; l < L1; l++) {
        const int64_t nl = ebm_model_layer_size(m, l);
        t_snap sn;
        t_soft_context("%s: ebm_model_layer_mean(l = %lld)", tag, (long long)l);
        t_fill_states(m, GN, x, w, 51 + (uint64_t)l);
        memset(a, 0xA5, (size_t)(GN * nl) * sizeof *a);
        snap_begin(&sn, m, NULL, NULL);
        t_snap_track(&sn, "mean", a, (size_t)(GN * nl) * sizeof *a);
        JUDGE(&sn, FAIL_VALUE, ebm_model_errmsg(m), ebm_model_layer_mean(m, l, GN, x, w, a, nl),
              layer_ok(m, l, GN, a, 1, "mean"));

        t_soft_context("%s: ebm_model_layer_sample(l = %lld)", tag, (long long)l);
        snap_begin(&sn, m, r, NULL);
        t_snap_track(&sn, "x", x, (size_t)(GN * w) * sizeof *x);
        JUDGE(&sn, FAIL_VALUE, ebm_model_errmsg(m), ebm_model_layer_sample(m, l, r, GN, x, w),
              rows_ok(m, -1, GN, x, w, 0, "x"));
    }
    for (int c = 0; c < 2; c++) {
        t_snap sn;
        int64_t sweeps[GN];
        memset(clamp, 0, (size_t)w);
        memset(clamp, c, (size_t)ebm_model_layer_size(m, 0));
        t_soft_context("%s: ebm_model_local_search(%s)", tag, c ? "visible clamped" : "no clamp");
        t_fill_states(m, GN, x, w, 61 + (uint64_t)c);
        t_sentinel(sweeps, sizeof sweeps); /* a failed search must leave it */
        snap_begin(&sn, m, r, NULL);
        t_snap_track(&sn, "x", x, (size_t)(GN * w) * sizeof *x);
        t_snap_track(&sn, "sweeps", sweeps, sizeof sweeps);
        JUDGE(&sn, FAIL_VALUE, ebm_model_errmsg(m),
              ebm_model_local_search(m, r, GN, x, w, clamp, 0, 50, sweeps),
              rows_ok(m, -1, GN, x, w, 0, "x"));

        t_soft_context("%s: ebm_model_mean_field(%s)", tag, c ? "visible clamped" : "no clamp");
        fill_means(m, GN, x, w, 71 + (uint64_t)c);
        snap_begin(&sn, m, NULL, NULL);
        t_snap_track(&sn, "mu", x, (size_t)(GN * w) * sizeof *x);
        int rc = ebm_model_mean_field(m, GN, x, w, clamp, 0, 30, 1e-6);
        int valid = 1;
        if (rc >= 0) {
            valid = rows_ok(m, -1, GN, x, w, 1, "mu");
            int again = ebm_model_mean_field(m, GN, x, w, clamp, 0, 1, 1e-6);
            if (again < 0) {
                T_SOFT_FAIL("mean_field returned %d but rejects its own result: %s", rc,
                            ebm_model_errmsg(m));
            }
        }
        judge(&sn, __LINE__, "ebm_model_mean_field", rc, FAIL_VALUE, ebm_model_errmsg(m), valid);
    }
    {
        t_snap sn;
        double ll[GN];
        memset(ll, 0xA5, sizeof ll);
        t_soft_context("%s: ebm_model_log_likelihood_bound", tag);
        t_fill_states(m, GN, x, w, 81);
        snap_begin(&sn, m, NULL, NULL);
        t_snap_track(&sn, "ll", ll, sizeof ll);
        JUDGE(&sn, FAIL_VALUE, ebm_model_errmsg(m),
              ebm_model_log_likelihood_bound(m, 0.0, GN, x, w, ll), finite_d(ll, GN, "ll"));

        double lz[2];
        memset(lz, 0xA5, sizeof lz);
        t_soft_context("%s: ebm_model_log_partition_ais", tag);
        snap_begin(&sn, m, r, NULL);
        t_snap_track(&sn, "log_z, std_err", lz, sizeof lz);
        JUDGE(&sn, FAIL_VALUE, ebm_model_errmsg(m),
              ebm_model_log_partition_ais(m, r, 2, 3, &lz[0], &lz[1]),
              finite_d(lz, 1, "log_z") && lz[1] >= 0);
    }
out:
    free(x);
    free(a);
    free(clamp);
}

static const double guard_mags[] = {1e10, 1e16, 1e20, 1e30, 3e38};

/* Every magnitude, two sign patterns each (random; weights + and biases -). */
static void body_guard(void *arg)
{
    const guard *g = arg;
    ebm_model_t *m = mk(g->n_layers, g->sizes, g->visible, g->hidden);
    ebm_rng_t *r = t_rng_started(5, 3, 1);
    for (size_t k = 0; m != NULL && r != NULL && k < sizeof guard_mags / sizeof guard_mags[0];
         k++) {
        const double mag = guard_mags[k];
        for (int pattern = 0; pattern < 2; pattern++) {
            char tag[120];
            snprintf(tag, sizeof tag, "%s %s%s model, |params| = %g, %s signs",
                     units_name(g->visible), g->n_layers == 2 ? "RBM" : "DBM",
                     g->hidden == EBM_UNITS_SPIN ? " (spin hidden)" : "", mag,
                     pattern == 0 ? "random" : "+W -b");
            if (set_magnitude(m, 1000 + k, pattern, mag) != EBM_OK) {
                break;
            }
            if (g->family == 0) {
                guard_single(m, r, tag);
                guard_samplers(m, r, tag);
            } else {
                guard_coupled(m, r, tag);
                guard_estimators(m, r, tag);
            }
        }
    }
    ebm_rng_destroy(r);
    ebm_model_destroy(m);
}

/* The models of the guard: 4x3 RBMs and 3-3-2 DBMs with binary, spin and
 * Gaussian visible units. */
static const guard guard_models[] = {
    {2, {4, 3, 0}, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 0},
    {2, {4, 3, 0}, EBM_UNITS_SPIN, EBM_UNITS_SPIN, 0},
    {2, {4, 3, 0}, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY, 0},
    {3, {3, 3, 2}, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 0},
    {3, {3, 3, 2}, EBM_UNITS_SPIN, EBM_UNITS_SPIN, 0},
    {3, {3, 3, 2}, EBM_UNITS_GAUSSIAN, EBM_UNITS_SPIN, 0},
};

/* Proves, for guard model _i at every magnitude: each call returns (the
 * child's deadline covers all of them; a hang names the call), and either
 * succeeds with valid, finite outputs or fails with EBM_EVALUE (EBM_ELIMIT
 * too for coupled steps and estimators) changing nothing. */
static void run_guard(int model, int family)
{
    guard g = guard_models[model];
    g.family = family;
    char what[120];
    snprintf(what, sizeof what, "hang guard, model %d, %s", model,
             family == 0 ? "single calls" : "coupled steps and estimators");
    bounded(what, 5, body_guard, &g);
}

START_TEST(guard_single_calls)
{
    run_guard(_i, 0);
    FINISH();
}
END_TEST

START_TEST(guard_coupled_and_estimators)
{
    run_guard(_i, 1);
    FINISH();
}
END_TEST

/* ======================================================================== */
/* 3. AIS leaves the generator alone when it fails                          */
/* ======================================================================== */

/* Proves: a 1x1 model with W = 3e38 and b_1 = 3e38, whose AIS weights
 * overflow: ebm_model_log_partition_ais(m, r, 2, 1, ...) fails with
 * EBM_EVALUE (or succeeds with a finite log Z) and r's state, log_z and
 * std_err are as they were. It used to take r's sequences before failing. */
static void ais_case(int visible, int hidden)
{
    const int64_t sizes[2] = {1, 1};
    ebm_model_t *m = t_model(2, sizes, visible, hidden);
    ebm_rng_t *r = t_rng_started(6, 3, 1);
    float *p = params_alloc(m);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_nonnull(p);
    set_block(m, p, EBM_PARAM_WEIGHT, 1, 3e38f);
    set_block(m, p, EBM_PARAM_BIAS, 1, 3e38f);
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    t_soft_context("AIS, 1x1 %s-%s model, W = b_1 = 3e38", units_name(visible), units_name(hidden));
    double lz = 12345.0, se = 678.0;
    t_snap sn;
    snap_begin(&sn, m, r, NULL);
    t_snap_track(&sn, "log_z", &lz, sizeof lz);
    t_snap_track(&sn, "std_err", &se, sizeof se);
    int rc = ebm_model_log_partition_ais(m, r, 2, 1, &lz, &se);
    judge(&sn, __LINE__, "ebm_model_log_partition_ais(m, r, 2, 1, &lz, &se)", rc, FAIL_VALUE,
          ebm_model_errmsg(m), rc >= 0 ? isfinite(lz) && isfinite(se) : 1);
    /* The same with std_err NULL, as in the report. */
    snap_begin(&sn, m, r, NULL);
    t_snap_track(&sn, "log_z", &lz, sizeof lz);
    rc = ebm_model_log_partition_ais(m, r, 2, 1, &lz, NULL);
    judge(&sn, __LINE__, "ebm_model_log_partition_ais(m, r, 2, 1, &lz, NULL)", rc, FAIL_VALUE,
          ebm_model_errmsg(m), rc >= 0 ? isfinite(lz) : 1);
    free(p);
    ebm_rng_destroy(r);
    ebm_model_destroy(m);
}

START_TEST(ais_failure_keeps_rng)
{
    ais_case(EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    ais_case(EBM_UNITS_SPIN, EBM_UNITS_SPIN);
    ais_case(EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
    FINISH();
}
END_TEST

/* ======================================================================== */
/* 4. Loading and saving paths that are not regular files                   */
/* ======================================================================== */

/* Entries of dir whose name contains ".tmp" (a save's leftovers), or -1. */
static int leftovers(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        return -1;
    }
    int n = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        n += strstr(ent->d_name, ".tmp") != NULL;
    }
    closedir(d);
    return n;
}

/* A path of about 2 PATH_MAX bytes under dir (its components are too long too). */
static char *long_path(const char *dir)
{
    size_t n = strlen(dir) + 2 * PATH_MAX + 16;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    size_t k = (size_t)snprintf(p, n, "%s/", dir);
    while (k < n - 8) {
        p[k] = (k % 200 == 0) ? '/' : 'x';
        k++;
    }
    memcpy(p + k, ".ebm", 5);
    return p;
}

typedef struct io_case {
    const char *what;
    const char *path;
    const char *dir;        /* the temporary directory: no leftovers allowed */
    const ebm_model_t *m;   /* save: the model; load: NULL */
    int name_in_message;    /* the message must contain the path (or, for a
                               path over PATH_MAX, its first 64 bytes) */
    mode_t keep_type;       /* save: the type the path must still have, or 0 */
} io_case;

/* Proves (load): EBM_EIO, *out NULL, and a message naming the path, without
 * blocking. (save): EBM_EIO, a message naming the path, the file at path
 * still what it was (a FIFO or device stays one: save writes model files,
 * and on failure "no file at path is changed"), no temporary file left. */
static void body_io(void *arg)
{
    const io_case *c = arg;
    char err[600];
    memset(err, 0, sizeof err);
    strcpy(err, "(untouched)");
    const char *msg;
    int rc;
    t_soft_context("%s", c->what);
    if (c->m == NULL) {
        ebm_model_t *out = (ebm_model_t *)&rc;
        rc = ebm_model_load(&out, c->path, err, sizeof err);
        msg = err;
        CHECK(out == NULL, "ebm_model_load left *out non-NULL");
        if (rc == EBM_OK) {
            ebm_model_destroy(out);
        }
    } else {
        rc = ebm_model_save(c->m, c->path);
        msg = ebm_model_errmsg(c->m);
    }
    CHECK(rc == EBM_EIO, "returned %s (%d), expected EBM_EIO; message \"%s\"", ebm_error_name(rc),
          rc, msg);
    if (rc != EBM_OK) {
        char prefix[65];
        snprintf(prefix, sizeof prefix, "%s", c->path);
        CHECK(msg[0] != '\0' && strcmp(msg, "(untouched)") != 0, "no message");
        CHECK(!c->name_in_message || strstr(msg, prefix) != NULL,
              "message \"%s\" does not name the path", msg);
    }
    if (c->keep_type != 0) {
        struct stat st;
        CHECK(lstat(c->path, &st) == 0 && (st.st_mode & S_IFMT) == c->keep_type,
              "the save replaced what was at the path (mode now 0%o)", (unsigned)st.st_mode);
    }
    if (c->dir != NULL) {
        CHECK(leftovers(c->dir) == 0, "a temporary file was left in %s", c->dir);
    }
}

START_TEST(load_never_blocks)
{
    char *dir = t_temp_dir("ebm_faults.");
    char *fifo = t_path(dir, "fifo.ebm"), *fifo_link = t_path(dir, "fifo_link.ebm");
    char *a = t_path(dir, "a"), *b = t_path(dir, "b"), *sub = t_path(dir, "sub");
    char *absent = t_path(dir, "absent/model.ebm"), *lp = long_path(dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(symlink("fifo.ebm", fifo_link), 0);
    ck_assert_int_eq(symlink("b", a), 0); /* a -> b -> a */
    ck_assert_int_eq(symlink("a", b), 0);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    const io_case cases[] = {
        {"load a directory", sub, NULL, NULL, 1, 0},
        {"load /dev/zero", "/dev/zero", NULL, NULL, 1, 0},
        {"load a symlink loop", a, NULL, NULL, 1, 0},
        {"load a path over PATH_MAX", lp, NULL, NULL, 1, 0},
        {"load a path in a missing directory", absent, NULL, NULL, 1, 0},
        {"load the empty path", "", NULL, NULL, 0, 0},
        {"load a FIFO", fifo, NULL, NULL, 1, 0},
        {"load a symlink to a FIFO", fifo_link, NULL, NULL, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strcmp(cases[i].path, "/dev/zero") == 0 && access("/dev/zero", R_OK) != 0) {
            continue;
        }
        io_case c = cases[i];
        bounded(c.what, 3, body_io, &c);
    }
    t_rm_tree(dir);
    free(fifo);
    free(fifo_link);
    free(a);
    free(b);
    free(sub);
    free(absent);
    free(lp);
    free(dir);
    FINISH();
}
END_TEST

START_TEST(save_to_special_paths)
{
    char *dir = t_temp_dir("ebm_faults.");
    const int64_t sizes[2] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    t_random_params(m, 5, 1.0);
    char *fifo = t_path(dir, "fifo.ebm"), *sub = t_path(dir, "sub"),
         *keep = t_path(dir, "sub/keep");
    char *absent = t_path(dir, "absent/model.ebm"), *full = t_path(dir, "full"),
         *lp = long_path(dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    FILE *f = fopen(keep, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    /* A device like /dev/full. The real one only where /dev is not writable:
     * as root, a save that renames over its path would replace the
     * machine's /dev/full; a copy made by mknod in the temporary directory
     * shows the same thing safely. */
    struct stat devfull;
    int have_copy = stat("/dev/full", &devfull) == 0 && S_ISCHR(devfull.st_mode) &&
                    mknod(full, S_IFCHR | 0666, devfull.st_rdev) == 0;
    int use_real = access("/dev", W_OK) != 0 && access("/dev/full", W_OK) == 0;
    const io_case cases[] = {
        {"save to a directory", sub, dir, m, 1, S_IFDIR},
        {"save into a missing directory", absent, dir, m, 1, 0},
        {"save to a path over PATH_MAX", lp, dir, m, 1, 0},
        {"save to a FIFO", fifo, dir, m, 1, S_IFIFO},
        {"save to a character device (a copy of /dev/full)", full, dir, m, 1, S_IFCHR},
        {"save to /dev/full", "/dev/full", NULL, m, 1, S_IFCHR},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if ((cases[i].path == full && !have_copy) ||
            (strcmp(cases[i].path, "/dev/full") == 0 && !use_real)) {
            continue;
        }
        io_case c = cases[i];
        bounded(c.what, 3, body_io, &c);
    }
    t_rm_tree(dir);
    ebm_model_destroy(m);
    free(fifo);
    free(sub);
    free(keep);
    free(absent);
    free(full);
    free(lp);
    free(dir);
    FINISH();
}
END_TEST

/* ======================================================================== */
/* 5. No EBM_OK with non-finite results near FLT_MAX                        */
/* ======================================================================== */

/* A 2-2-2 DBM with W_1 = +3e38 and W_2 = -3e38 everywhere: at the all-ones
 * state, layer 1's input is inf + (-inf) = NaN. */
static ebm_model_t *nan_dbm(int units)
{
    const int64_t sizes[3] = {2, 2, 2};
    ebm_model_t *m = t_model(3, sizes, units, units == EBM_UNITS_GAUSSIAN ? EBM_UNITS_BINARY
                                                                          : units);
    float *p = params_alloc(m);
    ck_assert_ptr_nonnull(p);
    set_block(m, p, EBM_PARAM_WEIGHT, 1, 3e38f);
    set_block(m, p, EBM_PARAM_WEIGHT, 2, -3e38f);
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    free(p);
    return m;
}

/* Random ±3e38 weights and biases on a 3-3-2 DBM or a 4x3 RBM. */
static ebm_model_t *max_model(int dbm, int units, uint64_t seed)
{
    const int64_t sizes_dbm[3] = {3, 3, 2}, sizes_rbm[2] = {4, 3};
    ebm_model_t *m = t_model(dbm ? 3 : 2, dbm ? sizes_dbm : sizes_rbm, units,
                             units == EBM_UNITS_GAUSSIAN ? EBM_UNITS_BINARY : units);
    ck_assert_int_eq(set_magnitude(m, seed, 0, 3e38), EBM_OK);
    return m;
}

/* All-ones states (Gaussian: 1). */
static void ones(const ebm_model_t *m, int64_t n, float *x)
{
    for (int64_t i = 0; i < n * ebm_model_state_width(m); i++) {
        x[i] = 1.0f;
    }
}

/* Proves: ebm_model_layer_mean never returns EBM_OK with NaN (or, for a
 * Gaussian layer, infinite) means: on the NaN DBMs and on random ±3e38
 * models, every layer, at all-ones and random states. */
START_TEST(layer_mean_never_ok_with_nan)
{
    ebm_model_t *ms[12];
    int nm = 0;
    for (int u = 0; u < 3; u++) {
        ms[nm++] = nan_dbm(u);
        ms[nm++] = max_model(1, u, 100 + (uint64_t)u);
        ms[nm++] = max_model(1, u, 200 + (uint64_t)u);
        ms[nm++] = max_model(0, u, 300 + (uint64_t)u);
    }
    for (int k = 0; k < nm; k++) {
        ebm_model_t *m = ms[k];
        const int64_t w = ebm_model_state_width(m);
        float x[4 * 10], a[4 * 10];
        ones(m, 1, x);
        t_fill_states(m, 3, x + w, w, 7 + (uint64_t)k);
        for (int64_t l = 0; l < ebm_model_num_layers(m); l++) {
            int64_t nl = ebm_model_layer_size(m, l);
            t_soft_context("model %d (%s, %lld layers): ebm_model_layer_mean(l = %lld)", k,
                           units_name(ebm_model_layer_units(m, 0)),
                           (long long)ebm_model_num_layers(m), (long long)l);
            memset(a, 0xA5, sizeof a);
            t_snap sn;
            snap_begin(&sn, m, NULL, NULL);
            t_snap_track(&sn, "mean", a, sizeof a);
            JUDGE(&sn, FAIL_VALUE, ebm_model_errmsg(m), ebm_model_layer_mean(m, l, 4, x, w, a, nl),
                  layer_ok(m, l, 4, a, 1, "mean"));
        }
    }
    for (int k = 0; k < nm; k++) {
        ebm_model_destroy(ms[k]);
    }
    FINISH();
}
END_TEST

/* Proves: ebm_model_mean_field never returns a success (>= 0) with means
 * that are NaN or out of range, i.e. that its own next call rejects; and
 * ebm_model_log_likelihood_bound never returns EBM_OK with a NaN bound. */
START_TEST(mean_field_and_bound_never_ok_with_nan)
{
    ebm_model_t *ms[9];
    int nm = 0;
    for (int u = 0; u < 3; u++) {
        ms[nm++] = nan_dbm(u);
        ms[nm++] = max_model(1, u, 400 + (uint64_t)u);
        ms[nm++] = max_model(1, u, 500 + (uint64_t)u);
    }
    for (int k = 0; k < nm; k++) {
        ebm_model_t *m = ms[k];
        const int64_t w = ebm_model_state_width(m);
        float mu[3 * 8];
        uint8_t clamp[8] = {0};
        for (int c = 0; c < 2; c++) {
            memset(clamp, c, (size_t)ebm_model_layer_size(m, 0));
            t_soft_context("model %d (%s DBM): ebm_model_mean_field(%s)", k,
                           units_name(ebm_model_layer_units(m, 0)),
                           c ? "visible clamped" : "no clamp");
            fill_means(m, 3, mu, w, 9 + (uint64_t)k);
            for (int64_t j = 0; j < ebm_model_layer_size(m, 0); j++) {
                mu[j] = 1.0f; /* row 0 visible all ones */
            }
            t_snap sn;
            snap_begin(&sn, m, NULL, NULL);
            t_snap_track(&sn, "mu", mu, sizeof mu);
            int rc = ebm_model_mean_field(m, 3, mu, w, clamp, 0, 20, 1e-6);
            int valid = 1;
            if (rc >= 0) {
                valid = rows_ok(m, -1, 3, mu, w, 1, "mu");
                int again = ebm_model_mean_field(m, 3, mu, w, clamp, 0, 1, 1e-6);
                CHECK(again >= 0, "mean_field returned %d, then rejected its own means: %s", rc,
                      ebm_model_errmsg(m));
            }
            judge(&sn, __LINE__, "ebm_model_mean_field", rc, FAIL_VALUE, ebm_model_errmsg(m),
                  valid);
        }
        t_soft_context("model %d (%s DBM): ebm_model_log_likelihood_bound", k,
                       units_name(ebm_model_layer_units(m, 0)));
        float data[3 * 8];
        ones(m, 1, data);
        t_fill_states(m, 2, data + w, w, 11 + (uint64_t)k);
        double ll[3];
        memset(ll, 0xA5, sizeof ll);
        t_snap sn;
        snap_begin(&sn, m, NULL, NULL);
        t_snap_track(&sn, "ll", ll, sizeof ll);
        JUDGE(&sn, FAIL_VALUE, ebm_model_errmsg(m),
              ebm_model_log_likelihood_bound(m, 0.0, 3, data, w, ll), finite_d(ll, 3, "ll"));
    }
    for (int k = 0; k < nm; k++) {
        ebm_model_destroy(ms[k]);
    }
    FINISH();
}
END_TEST

/* Proves: on a 3x2 GRBM with W = 3e38 and/or mu = 3e38 and log-variance
 * -30, the Gibbs step, local search and layer sample never return success
 * with inf or NaN in the visible layer: they succeed with finite values or
 * fail with EBM_EVALUE and x and the generator unchanged. */
START_TEST(grbm_visible_never_ok_with_inf)
{
    const int64_t sizes[2] = {3, 2};
    static const struct {
        float w, mu, b;
        const char *what;
    } cases[] = {
        {3e38f, 0.0f, 0.0f, "W = 3e38"},
        {3e38f, 3e38f, 0.0f, "W = mu = 3e38"},
        {0.0f, 3e38f, 3e38f, "mu = b_1 = 3e38"},
        {-3e38f, 3e38f, 3e38f, "W = -3e38, mu = b_1 = 3e38"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ebm_model_t *m = t_model(2, sizes, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
        ebm_rng_t *r = t_rng_started(7, 3, 1);
        float *p = params_alloc(m);
        set_block(m, p, EBM_PARAM_WEIGHT, 1, cases[k].w);
        set_block(m, p, EBM_PARAM_BIAS, 0, cases[k].mu);
        set_block(m, p, EBM_PARAM_BIAS, 1, cases[k].b);
        set_block(m, p, EBM_PARAM_LOGVAR, 0, -30.0f);
        ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
        const int64_t w = 5;
        float x[2 * 5];
        t_snap sn;

        ebm_sampler_t *s = NULL;
        ck_assert_int_eq(ebm_sampler_create(&s, m, EBM_SAMPLER_GIBBS), EBM_OK);
        for (int rep = 0; rep < 3; rep++) {
            t_soft_context("GRBM %s: ebm_sampler_step GIBBS (call %d)", cases[k].what, rep + 1);
            ones(m, 2, x);
            x[w + 3] = 0.0f;
            snap_begin(&sn, m, r, NULL);
            t_snap_track(&sn, "x", x, sizeof x);
            JUDGE(&sn, FAIL_VALUE, ebm_sampler_errmsg(s), ebm_sampler_step(s, r, 2, x, w),
                  rows_ok(m, -1, 2, x, w, 0, "x"));
        }
        ebm_sampler_destroy(s);

        t_soft_context("GRBM %s: ebm_model_local_search", cases[k].what);
        ones(m, 2, x);
        x[w + 4] = 0.0f;
        snap_begin(&sn, m, r, NULL);
        t_snap_track(&sn, "x", x, sizeof x);
        JUDGE(&sn, FAIL_VALUE, ebm_model_errmsg(m),
              ebm_model_local_search(m, r, 2, x, w, NULL, 0, 20, NULL),
              rows_ok(m, -1, 2, x, w, 0, "x"));

        t_soft_context("GRBM %s: ebm_model_layer_sample(l = 0)", cases[k].what);
        ones(m, 2, x);
        snap_begin(&sn, m, r, NULL);
        t_snap_track(&sn, "x", x, sizeof x);
        JUDGE(&sn, FAIL_VALUE, ebm_model_errmsg(m), ebm_model_layer_sample(m, 0, r, 2, x, w),
              rows_ok(m, -1, 2, x, w, 0, "x"));

        t_soft_context("GRBM %s: ebm_model_layer_mean(l = 0)", cases[k].what);
        float a[2 * 3];
        memset(a, 0xA5, sizeof a);
        ones(m, 2, x);
        snap_begin(&sn, m, NULL, NULL);
        t_snap_track(&sn, "mean", a, sizeof a);
        JUDGE(&sn, FAIL_VALUE, ebm_model_errmsg(m), ebm_model_layer_mean(m, 0, 2, x, w, a, 3),
              layer_ok(m, 0, 2, a, 1, "mean"));
        free(p);
        ebm_rng_destroy(r);
        ebm_model_destroy(m);
    }
    FINISH();
}
END_TEST

/* ======================================================================== */
/* 6. Messages that state the rule; n = 0 past the enumeration limit        */
/* ======================================================================== */

/* Proves: ebm_model_init with a finite scale above its upper limit (1e30)
 * fails with EBM_EVALUE, leaves the parameters and the generator alone, and
 * says there is an upper limit, rather than "must be finite and > 0", which
 * 1e31 is. */
START_TEST(init_scale_message_states_the_limit)
{
    const int64_t sizes[2] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    ebm_rng_t *r = t_rng_started(8, 3, 1);
    static const char *const words[] = {"1e+30", "1e30", "1e+030", "10^30", "limit",
                                        "at most", "<=", "maximum", "too large", NULL};
    const double scales[] = {1e31, 1e300};
    for (int i = 0; i < 2; i++) {
        for (int scheme = 0; scheme < 2; scheme++) {
            t_soft_context("ebm_model_init(scheme %d, scale %g)", scheme, scales[i]);
            t_snap sn;
            snap_begin(&sn, m, r, NULL);
            int rc = ebm_model_init(m, r, scheme, scales[i]);
            judge(&sn, __LINE__, "ebm_model_init", rc, FAIL_VALUE, ebm_model_errmsg(m), 1);
            CHECK(rc == EBM_EVALUE, "returned %s", ebm_error_name(rc));
            CHECK(contains_any(ebm_model_errmsg(m), words),
                  "message \"%s\" does not state the upper limit of scale",
                  ebm_model_errmsg(m));
        }
    }
    ebm_rng_destroy(r);
    ebm_model_destroy(m);
    FINISH();
}
END_TEST

/* Proves: EBM_ESTIMATOR_K above its upper limit (1e8) is refused with a
 * message naming that limit, not "takes 1 or more". */
START_TEST(estimator_k_message_states_the_limit)
{
    const int64_t sizes[2] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    static const char *const words[] = {"100000000", "1e8", "1e+08", "1e+8", "10^8", "limit",
                                        "at most", "<=", "maximum", "too large", NULL};
    const int kinds[2] = {EBM_ESTIMATOR_CD, EBM_ESTIMATOR_UCD};
    for (int i = 0; i < 2; i++) {
        ebm_estimator_t *e = NULL;
        ck_assert_int_eq(ebm_estimator_create(&e, m, kinds[i]), EBM_OK);
        t_soft_context("estimator kind %d: set_int(EBM_ESTIMATOR_K, 2e8)", kinds[i]);
        int rc = ebm_estimator_set_int(e, EBM_ESTIMATOR_K, 200000000);
        CHECK(rc == EBM_EVALUE, "returned %s", ebm_error_name(rc));
        CHECK(contains_any(ebm_estimator_errmsg(e), words),
              "message \"%s\" does not state the upper limit of K", ebm_estimator_errmsg(e));
        ebm_estimator_destroy(e);
    }
    ebm_model_destroy(m);
    FINISH();
}
END_TEST

/* Proves: ebm_model_energy_grad with a NaN already in grad fails with
 * EBM_EVALUE, leaves grad as it was, and its message mentions the NaN
 * (rather than quoting the finite contribution at that parameter). */
START_TEST(energy_grad_nan_in_grad_message)
{
    const int64_t sizes[2] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    t_random_params(m, 9, 1.0);
    float x[2 * 5] = {1, 0, 1, 1, 0, 0, 1, 1, 0, 1};
    double coef[2] = {0.5, -0.25};
    float grad[11];
    for (int pos = 0; pos < 11; pos += 5) {
        for (int i = 0; i < 11; i++) {
            grad[i] = 0.125f * (float)i;
        }
        grad[pos] = NAN;
        t_soft_context("ebm_model_energy_grad with grad[%d] = NaN", pos);
        t_snap sn;
        snap_begin(&sn, m, NULL, NULL);
        t_snap_track(&sn, "grad", grad, sizeof grad);
        int rc = ebm_model_energy_grad(m, 0, 2, x, 5, coef, grad);
        judge(&sn, __LINE__, "ebm_model_energy_grad", rc, FAIL_VALUE, ebm_model_errmsg(m), 1);
        CHECK(rc == EBM_EVALUE, "returned %s", ebm_error_name(rc));
        CHECK(t_contains(ebm_model_errmsg(m), "nan"), "message \"%s\" does not mention the NaN",
              ebm_model_errmsg(m));
    }
    ebm_model_destroy(m);
    FINISH();
}
END_TEST

/* Proves: n = 0 is valid and does nothing, also for ebm_model_log_likelihood
 * on a DBM past the per-row enumeration limit (1-25-25: 2^25 states per
 * row): EBM_OK, ll untouched. With n = 1 the limit still applies. */
START_TEST(log_likelihood_n0_past_the_limit)
{
    const int64_t sizes[3] = {1, 25, 25};
    ebm_model_t *m = t_model(3, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    float data[1] = {1.0f};
    double ll[1] = {42.0};
    t_soft_context("ebm_model_log_likelihood(n = 0) on a 1-25-25 DBM");
    int rc = ebm_model_log_likelihood(m, 0.0, 0, data, 1, ll);
    CHECK(rc == EBM_OK, "returned %s: \"%s\"", ebm_error_name(rc), ebm_model_errmsg(m));
    CHECK(ll[0] == 42.0, "ll changed to %g", ll[0]);
    rc = ebm_model_log_likelihood(m, 0.0, 0, NULL, 1, NULL);
    CHECK(rc == EBM_OK, "with NULL buffers returned %s: \"%s\"", ebm_error_name(rc),
          ebm_model_errmsg(m));
    t_soft_context("ebm_model_log_likelihood(n = 1) on a 1-25-25 DBM");
    rc = ebm_model_log_likelihood(m, 0.0, 1, data, 1, ll);
    CHECK(rc == EBM_ELIMIT, "n = 1 returned %s", ebm_error_name(rc));
    ebm_model_destroy(m);
    FINISH();
}
END_TEST

/* ======================================================================== */

/* Proves: a coupled Gibbs step whose residual draw reaches the try limit
 * fails with EBM_ELIMIT and changes nothing (x, y, met, rng), both when it
 * works on x and y in place (dense rows, none met) and when it gathers
 * rows (a stride past the width); and a UCD gradient through such a step
 * fails the same way with grad and rng unchanged. The limit is lowered to
 * 0 tries (ebm__set_residual_try_limit, testing.h), so any row off the meeting event
 * stops the step; a 1x1 RBM with W = 2 and chains apart leaves the meeting
 * event with probability about 0.38 per row. Its twin, with the limit at
 * its default, must succeed on the same inputs. Under BLOCKWISE the step
 * can also stop in the second block, after the first was drawn in place:
 * with W = 40, b = -20, c = 0, v follows h almost surely (the first block's
 * residual tries accept at once), and h given v = 0 and v = 1 differ by TV
 * 1/2, so with a limit of 1 try only BLOCKWISE's second loop stops (the
 * other couplings succeed on the same inputs: the stop is in B2). */

static const float W2_PARAMS[3] = {2.0f, 0.0f, 0.0f}, W40_PARAMS[3] = {40.0f, -20.0f, 0.0f};

/* limit: the residual try limit of the call (-1: the default). */
static int try_limit_case(int64_t ld, int coupling, int64_t limit, const float *p)
{
    const int64_t sizes[2] = {1, 1};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    ebm_sampler_t *s = NULL;
    ck_assert_int_eq(ebm_sampler_create(&s, m, EBM_SAMPLER_GIBBS), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_COUPLING, coupling), EBM_OK);
    ebm_rng_t *r = NULL;
    ck_assert_int_eq(ebm_rng_create(&r, 17, 0), EBM_OK);
    enum { N = 16 };
    float x[N * 3] = {0}, y[N * 3] = {0}, x0[N * 3], y0[N * 3];
    uint8_t met[N], met0[N];
    for (int64_t i = 0; i < N * ld; i++) {
        x[i] = (i % ld) == 1 ? 0.0f : (i % ld == 0 ? 1.0f : 7.0f);
        y[i] = (i % ld) == 1 ? 1.0f : (i % ld == 0 ? 1.0f : 7.0f);
    }
    memset(met, 9, sizeof met);
    uint64_t st0[EBM_RNG_STATE_WORDS], st1[EBM_RNG_STATE_WORDS];
    const int64_t saved_limit = limit >= 0 ? ebm__set_residual_try_limit(limit) : -1;
    memcpy(x0, x, sizeof x);
    memcpy(y0, y, sizeof y);
    memcpy(met0, met, sizeof met);
    ck_assert_int_eq(ebm_rng_get_state(r, st0), EBM_OK);
    const double iter0 = ebm_sampler_stat(s, EBM_STAT_ITERATION);
    int rc = ebm_sampler_coupled_step(s, r, N, x, ld, y, ld, met);
    if (saved_limit >= 0) {
        ebm__set_residual_try_limit(saved_limit);
    }
    ck_assert_int_eq(ebm_rng_get_state(r, st1), EBM_OK);
    if (rc == EBM_ELIMIT) {
        ck_assert_msg(memcmp(x, x0, sizeof x) == 0 && memcmp(y, y0, sizeof y) == 0,
                      "ld %lld: the failed step changed x or y", (long long)ld);
        ck_assert_msg(memcmp(met, met0, sizeof met) == 0, "the failed step wrote met");
        ck_assert_msg(memcmp(st0, st1, sizeof st0) == 0, "the failed step moved the generator");
        ck_assert(ebm_sampler_stat(s, EBM_STAT_ITERATION) == iter0);
        ck_assert_ptr_nonnull(strstr(ebm_sampler_errmsg(s), "tries"));
    }
    ebm_rng_destroy(r);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
    return rc;
}

START_TEST(residual_try_limit_undoes_the_step)
{
    for (int coupling = EBM_COUPLING_MAXIMAL; coupling <= EBM_COUPLING_BLOCKWISE; coupling++) {
        for (int64_t ld = 2; ld <= 3; ld++) { /* 2: in place; 3: gathered */
            ck_assert_int_eq(try_limit_case(ld, coupling, 0, W2_PARAMS), EBM_ELIMIT);
            ck_assert_int_eq(try_limit_case(ld, coupling, -1, W2_PARAMS), EBM_OK);
            ck_assert_int_eq(try_limit_case(ld, coupling, 1, W40_PARAMS),
                             coupling == EBM_COUPLING_BLOCKWISE ? EBM_ELIMIT : EBM_OK);
            ck_assert_int_eq(try_limit_case(ld, coupling, -1, W40_PARAMS), EBM_OK);
        }
    }
    /* Through an estimator: UCD's coupled steps, grad and rng unchanged. */
    const int64_t sizes[2] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    t_random_params(m, 5, 2.0);
    ebm_estimator_t *e = NULL;
    ck_assert_int_eq(ebm_estimator_create(&e, m, EBM_ESTIMATOR_UCD), EBM_OK);
    ebm_rng_t *r = NULL;
    ck_assert_int_eq(ebm_rng_create(&r, 3, 0), EBM_OK);
    float data[8 * 3], grad[32], grad0[32];
    for (int i = 0; i < 8 * 3; i++) {
        data[i] = (float)((i * 7) % 3 == 0);
    }
    for (int i = 0; i < 32; i++) {
        grad[i] = grad0[i] = 42.0f;
    }
    uint64_t st0[EBM_RNG_STATE_WORDS], st1[EBM_RNG_STATE_WORDS];
    ck_assert_int_eq(ebm_rng_get_state(r, st0), EBM_OK);
    const int64_t saved_limit = ebm__set_residual_try_limit(0);
    int rc = ebm_estimator_gradient(e, r, 8, data, 3, grad);
    ebm__set_residual_try_limit(saved_limit);
    ck_assert_int_eq(rc, EBM_ELIMIT);
    ck_assert_int_eq(ebm_rng_get_state(r, st1), EBM_OK);
    ck_assert(memcmp(st0, st1, sizeof st0) == 0);
    ck_assert(memcmp(grad, grad0, sizeof grad) == 0);
    ck_assert_int_eq(ebm_estimator_gradient(e, r, 8, data, 3, grad), EBM_OK);
    ebm_rng_destroy(r);
    ebm_estimator_destroy(e);
    ebm_model_destroy(m);
}
END_TEST

Suite *ebm_faults_suite(void)
{
    const int n_models = (int)(sizeof guard_models / sizeof guard_models[0]);
    /* bounded() kills each child at its own deadline; these outer timeouts
     * only need to exceed the sum of those (Check scales them by
     * CK_TIMEOUT_MULTIPLIER too). */
    const double slow = (double)deadline(60), quick = (double)deadline(10);
    const t_test tests[] = {
        {"coupled_hang", coupled_gibbs_binary_1e16, 0, slow, t_soft_setup, NULL},
        {"coupled_hang", coupled_gibbs_spin_1e20, 0, slow, t_soft_setup, NULL},
        {"coupled_hang", ucd_default_options_huge_weights, 0, slow, t_soft_setup, NULL},
        {"coupled_hang", ucd_step_limit_stops_chains_that_never_meet, 0, slow, t_soft_setup, NULL},
        {"coupled_hang", residual_try_limit_undoes_the_step, 0, slow, t_soft_setup, NULL},
        {"hang_guard", guard_single_calls, n_models, slow, t_soft_setup, NULL},
        {"hang_guard", guard_coupled_and_estimators, n_models, slow, t_soft_setup, NULL},
        {"ais_rng", ais_failure_keeps_rng, 0, quick, t_soft_setup, NULL},
        {"io", load_never_blocks, 0, slow, t_soft_setup, NULL},
        {"io", save_to_special_paths, 0, slow, t_soft_setup, NULL},
        {"nonfinite", layer_mean_never_ok_with_nan, 0, quick, t_soft_setup, NULL},
        {"nonfinite", mean_field_and_bound_never_ok_with_nan, 0, quick, t_soft_setup, NULL},
        {"nonfinite", grbm_visible_never_ok_with_inf, 0, quick, t_soft_setup, NULL},
        {"messages", init_scale_message_states_the_limit, 0, quick, t_soft_setup, NULL},
        {"messages", estimator_k_message_states_the_limit, 0, quick, t_soft_setup, NULL},
        {"messages", energy_grad_nan_in_grad_message, 0, quick, t_soft_setup, NULL},
        {"messages", log_likelihood_n0_past_the_limit, 0, quick, t_soft_setup, NULL},
    };
    return t_suite("faults", tests, sizeof tests / sizeof tests[0]);
}
