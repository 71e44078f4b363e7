/*
 * The library's threads (ebm_set_num_threads): results do not depend on
 * their number. Every batched call that runs rows on threads is made with 1 thread and
 * with 3 (more threads than this machine may have, so the rows are split
 * unevenly), from the same generator state, and must write the same bytes:
 * layer draws, means, local search (incremental updates included), mean
 * field, coupled Gibbs steps (both couplings, with residual rejection
 * loops), the UCD and UCD-LMI gradients built from them, and a GRBM's
 * Gibbs-Langevin steps (closed form and step by step) and modified-CD
 * gradient. BLAS runs with
 * the threads the environment gives it (make check: 1), the same in both.
 * The broken twin splits the rows wrongly (testing.h) and must differ.
 * Also: the setting's range and default, calls from two of the user's
 * threads at once (one runs its loops alone, the same bytes), and a forked
 * child that needs threads after its parent started them.
 * The same tests run in the OpenMP build (Makefile: OPENMP), where the
 * loops use OpenMP's threads.
 */
#define _GNU_SOURCE /* CPU_COUNT, usleep */
#include "tests.h"
#include "testing.h"
#include "threads.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* n threads, and every loop of two rows or more split among them (n > 1);
 * 0: the defaults. */
static void set_threads(int64_t n)
{
    char err[256];
    ck_assert_int_eq(ebm_set_num_threads(n, err, sizeof err), EBM_OK);
    ebm__threads_set_min_work(n == 0 ? EBM__PARALLEL_MIN : 1);
}

enum { N = 600 };
static const int64_t SIZES[3] = {90, 70, 50};

typedef struct fixture {
    ebm_model_t *m;
    int64_t w, np;
    float *x0;    /* N random states */
    float *data;  /* N visible rows */
} fixture;

static void fixture_make(fixture *f, int units)
{
    char err[256];
    ck_assert_int_eq(ebm_model_create(&f->m, 3, SIZES, units, units, err, sizeof err), EBM_OK);
    ebm_rng_t *rng = NULL;
    ck_assert_int_eq(ebm_rng_create(&rng, 17, (uint64_t)units), EBM_OK);
    ck_assert_int_eq(ebm_model_init(f->m, rng, EBM_INIT_GAUSSIAN, 0.15), EBM_OK);
    f->w = ebm_model_state_width(f->m);
    f->np = ebm_model_param_count(f->m);
    f->x0 = malloc((size_t)(N * f->w) * sizeof *f->x0);
    f->data = malloc((size_t)(N * SIZES[0]) * sizeof *f->data);
    ck_assert_int_eq(ebm_model_random_state(f->m, rng, N, f->x0, f->w, NULL, 0), EBM_OK);
    for (int64_t r = 0; r < N; r++) {
        memcpy(f->data + r * SIZES[0], f->x0 + ((r * 7) % N) * f->w,
               (size_t)SIZES[0] * sizeof *f->data);
    }
    ebm_rng_destroy(rng);
}

static void fixture_free(fixture *f)
{
    ebm_model_destroy(f->m);
    free(f->x0);
    free(f->data);
}

/* Everything threaded, into out (N x w floats for each state result and
 * np for each gradient), from a fresh generator. */
static void run_all(const fixture *f, float *out)
{
    const int64_t w = f->w, nw = N * w;
    ebm_rng_t *rng = NULL;
    ck_assert_int_eq(ebm_rng_create(&rng, 99, 0), EBM_OK);
    float *x = out, *y = out + nw;
    /* draws of every layer, then means of layer 1 */
    memcpy(x, f->x0, (size_t)nw * sizeof *x);
    for (int64_t l = 0; l < 3; l++) {
        ck_assert_int_eq(ebm_model_layer_sample(f->m, l, rng, N, x, w), EBM_OK);
    }
    float *mean = out + 2 * nw;
    ck_assert_int_eq(ebm_model_layer_mean(f->m, 1, N, x, w, mean, SIZES[1]), EBM_OK);
    /* local search from noise, and mean field with v clamped */
    float *ls = out + 3 * nw;
    memcpy(ls, f->x0, (size_t)nw * sizeof *ls);
    ck_assert_int_ge(ebm_model_local_search(f->m, rng, N, ls, w, NULL, 0, 1000, NULL), 0);
    float *mf = out + 4 * nw;
    uint8_t *clamp = calloc((size_t)w, 1);
    memset(clamp, 1, (size_t)SIZES[0]);
    for (int64_t r = 0; r < N; r++) {
        for (int64_t k = 0; k < w; k++) {
            mf[r * w + k] = k < SIZES[0] ? f->x0[r * w + k] : 0.0f;
        }
    }
    ck_assert_int_ge(ebm_model_mean_field(f->m, N, mf, w, clamp, 0, 50, 1e-6), 0);
    free(clamp);
    /* coupled Gibbs steps, both couplings */
    for (int coupling = 0; coupling < 2; coupling++) {
        ebm_sampler_t *s = NULL;
        ck_assert_int_eq(ebm_sampler_create(&s, f->m, EBM_SAMPLER_GIBBS), EBM_OK);
        ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_COUPLING, coupling), EBM_OK);
        memcpy(y, f->x0, (size_t)nw * sizeof *y);
        for (int t = 0; t < 5; t++) {
            ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, N, x, w, y, w, NULL), EBM_OK);
        }
        ebm_sampler_destroy(s);
    }
    /* parallel tempering: 200 chains of 3 replicas, five steps */
    float *pt = out + 5 * nw;
    memcpy(pt, f->x0, (size_t)nw * sizeof *pt);
    {
        const double betas[3] = {0.2, 0.6, 1.0};
        ebm_sampler_t *s = NULL;
        ck_assert_int_eq(ebm_sampler_create(&s, f->m, EBM_SAMPLER_TEMPERING), EBM_OK);
        ck_assert_int_eq(ebm_sampler_set_ladder(s, 3, betas), EBM_OK);
        for (int t = 0; t < 5; t++) {
            ck_assert_int_eq(ebm_sampler_step(s, rng, N, pt, w), EBM_OK);
        }
        ebm_sampler_destroy(s);
    }
    /* gradients */
    float *g = out + 6 * nw;
    const int kinds[2] = {EBM_ESTIMATOR_UCD, EBM_ESTIMATOR_UCD_LMI};
    for (int k = 0; k < 2; k++) {
        ebm_estimator_t *e = NULL;
        ck_assert_int_eq(ebm_estimator_create(&e, f->m, kinds[k]), EBM_OK);
        ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_MAX_STEPS, 200), EBM_OK);
        ck_assert_int_eq(ebm_estimator_gradient(e, rng, N, f->data, SIZES[0], g + k * f->np),
                         EBM_OK);
        ebm_estimator_destroy(e);
    }
    ebm_rng_destroy(rng);
}

START_TEST(thread_count_independence)
{
    const int units = _i == 0 ? EBM_UNITS_BINARY : EBM_UNITS_SPIN;
    fixture f;
    fixture_make(&f, units);
    const size_t total = (size_t)(6 * N * f.w + 2 * f.np);
    float *one = calloc(total, sizeof *one), *many = calloc(total, sizeof *many);
    set_threads(1);
    run_all(&f, one);
    set_threads(3);
    run_all(&f, many);
    set_threads(0);
    const char *what[7] = {"draws / coupled x", "coupled y", "means", "local search",
                           "mean field", "tempering", "gradients"};
    for (size_t i = 0; i < total; i++) {
        if (memcmp(&one[i], &many[i], sizeof *one) != 0) {
            size_t part = i / (size_t)(N * f.w);
            ck_abort_msg("units %d: %s differ between 1 and 3 threads at float %zu (%g vs %g)",
                         units, what[part < 6 ? part : 6], i, (double)one[i], (double)many[i]);
        }
    }
    free(one);
    free(many);
    fixture_free(&f);
}
END_TEST

/* A GRBM 60-50: Gibbs-Langevin steps and a modified-CD gradient. */
static void run_grbm(float *out, int64_t *count)
{
    const int64_t sizes[2] = {60, 50}, w = 110;
    ebm_model_t *m = NULL;
    char err[256];
    ck_assert_int_eq(ebm_model_create(&m, 2, sizes, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY, err,
                                      sizeof err), EBM_OK);
    ebm_rng_t *rng = NULL;
    ck_assert_int_eq(ebm_rng_create(&rng, 23, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 0.1), EBM_OK);
    const int64_t np = ebm_model_param_count(m);
    float *x = out, *g = out + N * w;
    ck_assert_int_eq(ebm_model_random_state(m, rng, N, x, w, NULL, 0), EBM_OK);
    for (int closed = 0; closed < 2; closed++) {
        ebm_sampler_t *s = NULL;
        ck_assert_int_eq(ebm_sampler_create(&s, m, EBM_SAMPLER_GIBBS_LANGEVIN), EBM_OK);
        ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_CLOSED_FORM, closed), EBM_OK);
        ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_ADJUST_AFTER, 1), EBM_OK);
        for (int t = 0; t < 3; t++) {
            ck_assert_int_eq(ebm_sampler_step(s, rng, N, x, w), EBM_OK);
        }
        ebm_sampler_destroy(s);
    }
    ebm_estimator_t *e = NULL;
    ck_assert_int_eq(ebm_estimator_create(&e, m, EBM_ESTIMATOR_GRBM_CD), EBM_OK);
    ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_SAMPLER, EBM_SAMPLER_GIBBS_LANGEVIN),
                     EBM_OK);
    float *data = malloc((size_t)(N * sizes[0]) * sizeof *data);
    ck_assert_int_eq(ebm_rng_normal(rng, N * sizes[0], data), EBM_OK);
    ck_assert_int_eq(ebm_estimator_gradient(e, rng, N, data, sizes[0], g), EBM_OK);
    free(data);
    ebm_estimator_destroy(e);
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
    *count = N * w + np;
}

START_TEST(thread_count_independence_grbm)
{
    const size_t cap = (size_t)(N * 110 + 10000);
    float *one = calloc(cap, sizeof *one), *many = calloc(cap, sizeof *many);
    int64_t n1 = 0, n3 = 0;
    set_threads(1);
    run_grbm(one, &n1);
    set_threads(3);
    run_grbm(many, &n3);
    set_threads(0);
    ck_assert_int_eq(n1, n3);
    ck_assert(n1 <= (int64_t)cap);
    for (int64_t i = 0; i < n1; i++) {
        if (memcmp(&one[i], &many[i], sizeof *one) != 0) {
            ck_abort_msg("GRBM: %s differ between 1 and 3 threads at float %lld (%g vs %g)",
                         i < N * 110 ? "Gibbs-Langevin states" : "gradients", (long long)i,
                         (double)one[i], (double)many[i]);
        }
    }
    free(one);
    free(many);
}
END_TEST

/* The twin's wrong split must change the results (else the comparison
 * above could not see one): the means of layer 1, computed in the output
 * (a row the twin skips keeps its input there). */
START_TEST(twin_split_differs)
{
    fixture f;
    fixture_make(&f, EBM_UNITS_BINARY);
    const size_t size = (size_t)(N * SIZES[1]);
    float *one = malloc(size * sizeof *one), *many = malloc(size * sizeof *many);
    for (int twin = 0; twin < 2; twin++) {
        float *out[2] = {one, many};
        for (int k = 0; k < 2; k++) {
            set_threads(k == 0 ? 1 : 3);
            ebm__threads_set_twin(twin);
            ck_assert_int_eq(ebm_model_layer_mean(f.m, 1, N, f.x0, f.w, out[k], SIZES[1]), EBM_OK);
            ebm__threads_set_twin(0);
        }
        const int same = memcmp(one, many, size * sizeof *one) == 0;
        ck_assert_msg(same == !twin, twin ? "the twin's wrong split gave the same bytes"
                                          : "1 and 3 threads differ");
    }
    set_threads(0);
    free(one);
    free(many);
    fixture_free(&f);
}
END_TEST

/* The setting: its range, its message, its default from EBM_NUM_THREADS or
 * the CPUs the process may run on. */
START_TEST(setting)
{
    char err[256];
    set_threads(3);
    ck_assert_int_eq(ebm_get_num_threads(), 3);
    const int64_t bad[3] = {-1, 257, INT64_MAX};
    for (int i = 0; i < 3; i++) {
        err[0] = '\0';
        ck_assert_int_eq(ebm_set_num_threads(bad[i], err, sizeof err), EBM_EVALUE);
        char want[64];
        snprintf(want, sizeof want, "n is %lld", (long long)bad[i]);
        ck_assert_msg(strstr(err, want) != NULL, "message \"%s\" lacks \"%s\"", err, want);
        ck_assert_int_eq(ebm_get_num_threads(), 3); /* unchanged */
    }
    ck_assert_int_eq(ebm_set_num_threads(-1, NULL, 0), EBM_EVALUE);
    set_threads(256);
    ck_assert_int_eq(ebm_get_num_threads(), 256);

    cpu_set_t cpus;
    ck_assert_int_eq(sched_getaffinity(0, sizeof cpus, &cpus), 0);
    const char *saved = getenv("EBM_NUM_THREADS");
    char *keep = saved != NULL ? strdup(saved) : NULL;
    setenv("EBM_NUM_THREADS", "5", 1);
    set_threads(0);
    ck_assert_int_eq(ebm_get_num_threads(), 5);
    const char *ignored[4] = {"0", "257", "2x", ""};
    for (int i = 0; i < 4; i++) {
        setenv("EBM_NUM_THREADS", ignored[i], 1);
        set_threads(0);
        ck_assert_int_eq(ebm_get_num_threads(), CPU_COUNT(&cpus));
    }
    if (keep != NULL) {
        setenv("EBM_NUM_THREADS", keep, 1);
    } else {
        unsetenv("EBM_NUM_THREADS");
    }
    free(keep);
    set_threads(0);
}
END_TEST

typedef struct caller {
    float *out;
    int64_t count;
} caller;

static void *caller_main(void *arg)
{
    caller *c = arg;
    run_grbm(c->out, &c->count);
    return NULL;
}

/* Two of the user's threads call the library at once: one has the workers
 * at a time and the other runs its loops alone; both get a 1-thread run's
 * bytes. */
START_TEST(concurrent_callers)
{
    const size_t cap = (size_t)(N * 110 + 10000);
    float *one = calloc(cap, sizeof *one);
    int64_t n1 = 0;
    set_threads(1);
    run_grbm(one, &n1);
    set_threads(3);
    caller c[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        c[i].out = calloc(cap, sizeof *c[i].out);
        ck_assert_int_eq(pthread_create(&t[i], NULL, caller_main, &c[i]), 0);
    }
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
        ck_assert_int_eq(c[i].count, n1);
        ck_assert_msg(memcmp(one, c[i].out, (size_t)n1 * sizeof *one) == 0,
                      "caller %d differs from the 1-thread run", i);
        free(c[i].out);
    }
    set_threads(0);
    free(one);
}
END_TEST

#if !defined(_OPENMP) /* libgomp's threads do not survive a fork */
/* A child forked after the workers started makes its own (it must not wait
 * for its parent's, which it does not have): its threaded run finishes
 * within 60 s with the parent's bytes. */
START_TEST(forked_child)
{
    const size_t cap = (size_t)(N * 110 + 10000);
    float *one = calloc(cap, sizeof *one), *many = calloc(cap, sizeof *many);
    int64_t n1 = 0;
    set_threads(3);
    run_grbm(one, &n1); /* starts the workers */
    fflush(NULL);
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int64_t n = 0;
        run_grbm(many, &n);
        _exit(n == n1 && memcmp(one, many, (size_t)n1 * sizeof *one) == 0 ? 0 : 3);
    }
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 600 && done == 0; i++) {
        done = waitpid(pid, &status, WNOHANG);
        if (done == 0) {
            usleep(100000);
        }
    }
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ck_abort_msg("the forked child did not finish in 60 s");
    }
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the forked child failed (status %d)", status);
    set_threads(0);
    free(one);
    free(many);
}
END_TEST
#endif

Suite *ebm_threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("independence");
    t_add_unit("threads", "independence");
    /* Memcheck serialises threads and would take minutes here; it cannot see
     * races anyway (make check-valgrind excludes this tag). */
    tcase_set_tags(tc, "threads");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, thread_count_independence, 0, 2);
    tcase_add_test(tc, thread_count_independence_grbm);
    tcase_add_test(tc, twin_split_differs);
    tcase_add_test(tc, setting);
    tcase_add_test(tc, concurrent_callers);
    suite_add_tcase(s, tc);
#if !defined(_OPENMP)
    /* ThreadSanitizer does not follow a multithreaded fork (make check-tsan
     * excludes this tag). */
    TCase *fork_tc = tcase_create("fork");
    t_add_unit("threads", "fork");
    tcase_set_tags(fork_tc, "threads fork");
    tcase_set_timeout(fork_tc, 120);
    tcase_add_test(fork_tc, forked_child);
    suite_add_tcase(s, fork_tc);
#endif
    return s;
}
