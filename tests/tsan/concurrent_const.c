/*
 * The promise "calls taking a const model may run concurrently on the same
 * model" (include/ebm.h, docs/conventions.md), for ThreadSanitizer (make
 * check-tsan): THREADS threads share one model and make every const-model
 * call on it at once, each with its own generator, buffers, samplers and
 * estimators, ROUNDS times, together with calls that fail (they write the
 * model's message slot) and ebm_model_errmsg_copy. Every thread must get,
 * bit for bit, what one thread alone got: the calls draw from the
 * caller's generator only, so the results may not depend on the others.
 * Before the threads start, an axpy leaves the model's double weights stale,
 * so that their first readers refresh them at once (under the model's lock).
 * Models: a binary DBM, a spin RBM, a GRBM (Langevin and Gibbs-Langevin
 * samplers, modified CD) and a Gaussian-visible DBM.
 * It also runs without TSan: it exits 1 on a wrong result.
 *
 * SPDX-License-Identifier: MIT
 */
#include "ebm.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 4, ROUNDS = 2, N = 24 };

typedef struct model_case {
    const char *name;
    int64_t n_layers;
    int64_t sizes[3];
    int visible, hidden;
} model_case;

static const model_case CASES[] = {
    {"binary DBM 14-10-8", 3, {14, 10, 8}, EBM_UNITS_BINARY, EBM_UNITS_BINARY},
    {"spin RBM 12-9", 2, {12, 9, 0}, EBM_UNITS_SPIN, EBM_UNITS_SPIN},
    {"GRBM 10-8", 2, {10, 8, 0}, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY},
    {"Gaussian DBM 8-6-5", 3, {8, 6, 5}, EBM_UNITS_GAUSSIAN, EBM_UNITS_SPIN},
};

typedef struct shared {
    const ebm_model_t *m;
    int64_t w, np, n0;
    int grbm, gaussian, dbm;
    const float *x0;   /* N valid states */
} shared;

/* Everything one thread computes, appended to a byte log so that two runs
 * compare with one memcmp. */
typedef struct out_log {
    unsigned char *p;
    size_t n, cap;
    int failed;
    char what[256];
} out_log;

static void put(out_log *o, const void *p, size_t n)
{
    if (o->n + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->n + n) {
            cap *= 2;
        }
        unsigned char *q = realloc(o->p, cap);
        if (q == NULL) {
            abort();
        }
        o->p = q;
        o->cap = cap;
    }
    memcpy(o->p + o->n, p, n);
    o->n += n;
}

static void fail(out_log *o, const char *call, int rc)
{
    if (!o->failed) {
        o->failed = 1;
        snprintf(o->what, sizeof o->what, "%s returned %d (%s)", call, rc, ebm_error_name(rc));
    }
}

#define CALL(o, call, expr)                        \
    do {                                           \
        int rc_ = (expr);                          \
        put(o, &rc_, sizeof rc_);                  \
        if (rc_ < 0) {                             \
            fail(o, call, rc_);                    \
        }                                          \
    } while (0)

static void run_calls(const shared *s, out_log *o)
{
    const ebm_model_t *m = s->m;
    const int64_t w = s->w, nw = N * w;
    ebm_rng_t *rng = NULL;
    if (ebm_rng_create(&rng, 1234, 5) != EBM_OK) {
        abort();
    }
    float *x = malloc((size_t)nw * sizeof *x), *y = malloc((size_t)nw * sizeof *y);
    float *a = malloc((size_t)nw * sizeof *a), *g = calloc((size_t)s->np, sizeof *g);
    double *d = malloc(N * sizeof *d), coef[N];
    uint8_t met[N], *clamp = calloc((size_t)w, 1);
    int64_t sweeps[N];
    if (x == NULL || y == NULL || a == NULL || g == NULL || d == NULL || clamp == NULL) {
        abort();
    }
    for (int r = 0; r < N; r++) {
        coef[r] = (r % 3 == 0 ? -1.0 : 1.0) / N;
    }
    memset(clamp, 1, (size_t)s->n0);
    const uint32_t odd = 0xaaaaaaaau & ((1u << ebm_model_num_layers(m)) - 1u);

    /* energies and their gradients */
    CALL(o, "energy", ebm_model_energy(m, N, s->x0, w, d));
    put(o, d, N * sizeof *d);
    CALL(o, "free_energy", ebm_model_free_energy(m, odd, N, s->x0, w, d));
    put(o, d, N * sizeof *d);
    CALL(o, "energy_grad", ebm_model_energy_grad(m, odd, N, s->x0, w, coef, g));
    put(o, g, (size_t)s->np * sizeof *g);
    CALL(o, "energy_grad_input",
         ebm_model_energy_grad_input(m, 0, 0, N, s->x0, w, a, s->n0));
    put(o, a, (size_t)(N * s->n0) * sizeof *a);
    /* conditionals */
    for (int64_t l = 0; l < ebm_model_num_layers(m); l++) {
        const int64_t nl = ebm_model_layer_size(m, l), off = ebm_model_layer_offset(m, l);
        CALL(o, "layer_input", ebm_model_layer_input(m, l, N, s->x0, w, a, nl));
        put(o, a, (size_t)(N * nl) * sizeof *a);
        CALL(o, "layer_mean", ebm_model_layer_mean(m, l, N, s->x0, w, a, nl));
        put(o, a, (size_t)(N * nl) * sizeof *a);
        CALL(o, "layer_logprob", ebm_model_layer_logprob(m, l, N, s->x0, w, s->x0 + off, w, d));
        put(o, d, N * sizeof *d);
        memcpy(x, s->x0, (size_t)nw * sizeof *x);
        CALL(o, "layer_argmin", ebm_model_layer_argmin(m, l, N, x, w));
        CALL(o, "layer_sample", ebm_model_layer_sample(m, l, rng, N, x, w));
        put(o, x, (size_t)nw * sizeof *x);
    }
    CALL(o, "random_state", ebm_model_random_state(m, rng, N, x, w, clamp, 0));
    put(o, x, (size_t)nw * sizeof *x);
    /* local search and mean field, v clamped and free */
    memcpy(x, s->x0, (size_t)nw * sizeof *x);
    CALL(o, "local_search", ebm_model_local_search(m, rng, N, x, w, NULL, 0, 100, sweeps));
    put(o, x, (size_t)nw * sizeof *x);
    put(o, sweeps, sizeof sweeps);
    memcpy(x, s->x0, (size_t)nw * sizeof *x);
    CALL(o, "local_search clamped",
         ebm_model_local_search(m, rng, N, x, w, clamp, 0, 100, sweeps));
    put(o, x, (size_t)nw * sizeof *x);
    memcpy(x, s->x0, (size_t)nw * sizeof *x);
    CALL(o, "mean_field", ebm_model_mean_field(m, N, x, w, clamp, 0, 30, 1e-6));
    put(o, x, (size_t)nw * sizeof *x);
    /* evaluation */
    double log_z = 0.0, se = 0.0;
    CALL(o, "log_partition_exact", ebm_model_log_partition_exact(m, &log_z));
    put(o, &log_z, sizeof log_z);
    CALL(o, "log_likelihood", ebm_model_log_likelihood(m, log_z, N, s->x0, w, d));
    put(o, d, N * sizeof *d);
    CALL(o, "log_likelihood_bound", ebm_model_log_likelihood_bound(m, log_z, N, s->x0, w, d));
    put(o, d, N * sizeof *d);
    CALL(o, "log_partition_ais", ebm_model_log_partition_ais(m, rng, 8, 40, &log_z, &se));
    put(o, &log_z, sizeof log_z);
    put(o, &se, sizeof se);
    /* samplers: their own handles on the shared model */
    for (int kind = EBM_SAMPLER_GIBBS; kind <= EBM_SAMPLER_GIBBS_LANGEVIN; kind++) {
        if (kind >= EBM_SAMPLER_LANGEVIN && !s->grbm) {
            continue;
        }
        ebm_sampler_t *smp = NULL;
        CALL(o, "sampler_create", ebm_sampler_create(&smp, m, kind));
        if (smp == NULL) {
            continue;
        }
        if (kind == EBM_SAMPLER_MH_UNIFORM && s->gaussian) {
            CALL(o, "sampler_set_int", ebm_sampler_set_int(smp, EBM_SAMPLER_CLAMP_LAYERS, 1));
        }
        memcpy(x, s->x0, (size_t)nw * sizeof *x);
        for (int t = 0; t < 3; t++) {
            CALL(o, "sampler_step", ebm_sampler_step(smp, rng, N, x, w));
        }
        put(o, x, (size_t)nw * sizeof *x);
        if (kind <= EBM_SAMPLER_MH_UNIFORM) {
            for (int coupling = 0; coupling < (kind == EBM_SAMPLER_GIBBS ? 2 : 1); coupling++) {
                if (kind == EBM_SAMPLER_GIBBS) {
                    CALL(o, "sampler_set_int",
                         ebm_sampler_set_int(smp, EBM_SAMPLER_COUPLING, coupling));
                }
                memcpy(y, s->x0, (size_t)nw * sizeof *y);
                for (int t = 0; t < 3; t++) {
                    CALL(o, "coupled_step",
                         ebm_sampler_coupled_step(smp, rng, N, x, w, y, w, met));
                }
                put(o, x, (size_t)nw * sizeof *x);
                put(o, y, (size_t)nw * sizeof *y);
                put(o, met, sizeof met);
            }
        }
        ebm_sampler_destroy(smp);
    }
    /* estimators: their own handles (and PCD chains) on the shared model */
    for (int kind = EBM_ESTIMATOR_CD; kind <= EBM_ESTIMATOR_GRBM_CD; kind++) {
        if ((kind == EBM_ESTIMATOR_GRBM_CD && !s->grbm) ||
            (kind == EBM_ESTIMATOR_UCD_LMI && s->gaussian)) {
            continue;
        }
        ebm_estimator_t *e = NULL;
        CALL(o, "estimator_create", ebm_estimator_create(&e, m, kind));
        if (e == NULL) {
            continue;
        }
        CALL(o, "estimator_set_int", ebm_estimator_set_int(e, EBM_ESTIMATOR_MAX_STEPS, 100));
        if (kind == EBM_ESTIMATOR_GRBM_CD) {
            CALL(o, "estimator_set_int", ebm_estimator_set_int(e, EBM_ESTIMATOR_SAMPLER,
                                                               EBM_SAMPLER_GIBBS_LANGEVIN));
        }
        for (int t = 0; t < 2; t++) {
            CALL(o, "estimator_gradient", ebm_estimator_gradient(e, rng, N, s->x0, w, g));
            put(o, g, (size_t)s->np * sizeof *g);
        }
        ebm_estimator_destroy(e);
    }
    /* reads of the model itself */
    float *p = malloc((size_t)s->np * sizeof *p);
    const size_t cap = (size_t)ebm_model_save_size(m);
    void *buf = malloc(cap);
    size_t used = 0;
    if (p == NULL || buf == NULL) {
        abort();
    }
    CALL(o, "get_params", ebm_model_get_params(m, p));
    put(o, p, (size_t)s->np * sizeof *p);
    CALL(o, "save_buffer", ebm_model_save_buffer(m, buf, cap, &used));
    put(o, buf, used);
    free(p);
    free(buf);
    /* calls that fail: they write the shared message slot under its lock */
    memcpy(x, s->x0, (size_t)nw * sizeof *x);
    x[w - 1] = NAN;
    for (int t = 0; t < 20; t++) {
        int rc = ebm_model_energy(m, N, x, w, d);
        int rc2 = ebm_model_log_partition_ais(m, rng, 1, 1, &log_z, NULL);
        char msg[256];
        int rc3 = ebm_model_errmsg_copy(m, msg, sizeof msg);
        if (rc != EBM_EVALUE || rc2 != EBM_ESHAPE || rc3 != EBM_OK || msg[0] == '\0') {
            fail(o, "a failing call", rc != EBM_EVALUE ? rc : rc2);
        }
    }
    free(x);
    free(y);
    free(a);
    free(g);
    free(d);
    free(clamp);
    ebm_rng_destroy(rng);
}

typedef struct job {
    const shared *s;
    out_log log[ROUNDS];
} job;

static void *worker(void *arg)
{
    job *j = arg;
    for (int r = 0; r < ROUNDS; r++) {
        run_calls(j->s, &j->log[r]);
    }
    return NULL;
}

static int run_case(const model_case *mc)
{
    ebm_model_t *m = NULL;
    char err[256];
    if (ebm_model_create(&m, mc->n_layers, mc->sizes, mc->visible, mc->hidden, err,
                         sizeof err) != EBM_OK) {
        fprintf(stderr, "%s: %s\n", mc->name, err);
        return 1;
    }
    ebm_rng_t *rng = NULL;
    if (ebm_rng_create(&rng, 77, 0) != EBM_OK || ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 0.3)) {
        fprintf(stderr, "%s: init failed\n", mc->name);
        return 1;
    }
    shared s = {m, ebm_model_state_width(m), ebm_model_param_count(m), mc->sizes[0],
                mc->n_layers == 2 && mc->visible == EBM_UNITS_GAUSSIAN,
                mc->visible == EBM_UNITS_GAUSSIAN, mc->n_layers > 2, NULL};
    float *x0 = malloc((size_t)(N * s.w) * sizeof *x0);
    if (x0 == NULL || ebm_model_random_state(m, rng, N, x0, s.w, NULL, 0) != EBM_OK) {
        return 1;
    }
    s.x0 = x0;
    /* one thread alone first */
    out_log ref = {0};
    run_calls(&s, &ref);
    int bad = 0;
    if (ref.failed) {
        fprintf(stderr, "%s: one thread: %s\n", mc->name, ref.what);
        bad = 1;
    }
    /* An axpy that changes no value leaves the double weights to be
     * refreshed by the first call that reads them: the threads race to it. */
    float *zero = calloc((size_t)s.np, sizeof *zero);
    if (zero == NULL || ebm_model_axpy_params(m, 0.0f, zero) != EBM_OK) {
        fprintf(stderr, "%s: axpy failed\n", mc->name);
        return 1;
    }
    free(zero);
    job jobs[THREADS];
    pthread_t th[THREADS];
    memset(jobs, 0, sizeof jobs);
    for (int t = 0; t < THREADS; t++) {
        jobs[t].s = &s;
        if (pthread_create(&th[t], NULL, worker, &jobs[t]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
    }
    for (int t = 0; t < THREADS; t++) {
        for (int r = 0; r < ROUNDS; r++) {
            out_log *o = &jobs[t].log[r];
            if (o->failed) {
                fprintf(stderr, "%s: thread %d round %d: %s\n", mc->name, t, r, o->what);
                bad = 1;
            } else if (o->n != ref.n || memcmp(o->p, ref.p, ref.n) != 0) {
                size_t i = 0;
                while (i < o->n && i < ref.n && o->p[i] == ref.p[i]) {
                    i++;
                }
                fprintf(stderr, "%s: thread %d round %d: results differ from one thread's at "
                        "byte %zu of %zu\n", mc->name, t, r, i, ref.n);
                bad = 1;
            }
            free(o->p);
        }
    }
    printf("concurrent const calls, %s: %d threads x %d rounds, %zu bytes of results each: %s\n",
           mc->name, THREADS, ROUNDS, ref.n, bad ? "FAILED" : "same as one thread");
    free(ref.p);
    free(x0);
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
    return bad;
}

int main(void)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        bad |= run_case(&CASES[i]);
    }
    return bad;
}
