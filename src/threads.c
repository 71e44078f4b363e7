/*
 * The library's threads (threads.h): the thread count and its setting
 * (ebm_set_num_threads, EBM_NUM_THREADS), and the pool that runs a row loop
 * in parts, one part per thread, or OpenMP's threads in the OpenMP build.
 *
 * The pool's workers are started by the first loop that needs them and
 * live until the process ends (or the library is unloaded). One loop has
 * the pool at a time; a loop that finds it taken runs on its own thread.
 * A worker sleeps on a condition variable between jobs, so that it leaves
 * the cores to the BLAS's threads during the GEMMs; only while jobs come in
 * quick succession (the loops of a local-search sweep, with no GEMM between
 * them) does it poll the job counter for a while first, saving a wake-up
 * per loop. A forked child starts without
 * workers and makes its own when it needs them.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "error.h"
#include "testing.h"
#include "threads.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(_OPENMP)
#include <omp.h>
#endif


/* ---- the thread count ------------------------------------------------------ */

static atomic_int chosen; /* 0: not yet read; else the thread count */
static atomic_int twin;   /* testing.h: parts after the first lose their last row */
static atomic_llong min_work = EBM__PARALLEL_MIN; /* testing.h can lower it */

void ebm__threads_set_twin(int on)
{
    atomic_store(&twin, on);
}

int64_t ebm__threads_set_min_work(int64_t work)
{
    return atomic_exchange(&min_work, work);
}

/* The first row of part p of a loop over [0, n) in `parts` parts. */
static int64_t part_begin(int64_t n, int parts, int p)
{
    return n / parts * p + (p < n % parts ? p : n % parts);
}

/* The end of part p (the twin's parts after the first end a row early). */
static int64_t part_end(int64_t n, int parts, int p)
{
    const int64_t end = part_begin(n, parts, p + 1);
    return p > 0 && atomic_load_explicit(&twin, memory_order_relaxed) ? end - 1 : end;
}

/* EBM_NUM_THREADS if it is a whole number in range, else the CPUs this
 * process may run on (at most EBM__MAX_THREADS). */
static int default_threads(void)
{
    const char *s = getenv("EBM_NUM_THREADS");
    if (s != NULL && *s != '\0') {
        char *end = NULL;
        errno = 0;
        const long v = strtol(s, &end, 10);
        if (errno == 0 && *end == '\0' && v >= 1 && v <= EBM__MAX_THREADS) {
            return (int)v;
        }
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        return n < 1 ? 1 : n > EBM__MAX_THREADS ? EBM__MAX_THREADS : n;
    }
    return 1;
}

int ebm__threads(void)
{
    int t = atomic_load_explicit(&chosen, memory_order_relaxed);
    if (t == 0) {
        t = default_threads();
        int expected = 0; /* a concurrent ebm_set_num_threads wins */
        if (!atomic_compare_exchange_strong(&chosen, &expected, t)) {
            t = expected;
        }
    }
    return t;
}

int ebm_set_num_threads(int64_t n, char *errbuf, size_t errbuf_size)
{
    if (n < 0 || n > EBM__MAX_THREADS) {
        ebm__msg msg;
        ebm__fail(&msg, EBM_EVALUE, "ebm_set_num_threads: n is %lld; it takes 0 (the default) to %d",
                  (long long)n, EBM__MAX_THREADS);
        ebm__copy_text(errbuf, errbuf_size, msg.text);
        return EBM_EVALUE;
    }
    atomic_store(&chosen, n == 0 ? default_threads() : (int)n);
    return EBM_OK;
}

int ebm_get_num_threads(void)
{
    return ebm__threads();
}

/* ---- the pool --------------------------------------------------------------- */

#if !defined(_OPENMP)

/* How long a worker whose jobs come in quick succession polls for the next
 * before it sleeps, and how long the caller polls for the workers' parts:
 * 300 microseconds (docs/performance.md, item 32). */
enum { SPIN_NS = 300000 };

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Poll *word until it differs from `value` or SPIN_NS have passed since
 * `from`. */
static void poll_while(const atomic_uint_fast64_t *word, uint_fast64_t value, int64_t from)
{
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (atomic_load_explicit(word, memory_order_acquire) != value) {
                return;
            }
            cpu_relax();
        }
        if (now_ns() - from > SPIN_NS) {
            return;
        }
    }
}



static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* workers: a new job */
    pthread_cond_t done; /* the caller: every part done */
    int started;         /* workers running: threads 1..started */
    int stopping;
    pthread_t worker[EBM__MAX_THREADS];
    uint_fast64_t born[EBM__MAX_THREADS]; /* the job count when worker id started */
    /* the job, written under lock before `job` is advanced */
    ebm__rows_fn fn;
    void *ctx;
    int64_t n;
    int parts;
    int64_t given_at;         /* when the last job was given (now_ns) */
    atomic_uint_fast64_t job; /* jobs given so far */
    atomic_int remaining;     /* workers' parts not yet done */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

static atomic_flag taken = ATOMIC_FLAG_INIT; /* a loop has the pool */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void *worker_main(void *arg)
{
    const int id = (int)(intptr_t)arg;
    pthread_mutex_lock(&pool.lock);
    uint_fast64_t seen = pool.born[id]; /* the loop that started it is after this */
    int64_t done_at = 0;                /* when its last job ended here */
    int quick = 0;                      /* that job came within SPIN_NS of the one before */
    for (;;) {
        /* Poll for a while if jobs come in quick succession, then sleep
         * until the job changes. */
        pthread_mutex_unlock(&pool.lock);
        if (quick) {
            poll_while(&pool.job, seen, done_at);
        }
        pthread_mutex_lock(&pool.lock);
        while (atomic_load(&pool.job) == seen && !pool.stopping) {
            pthread_cond_wait(&pool.wake, &pool.lock);
        }
        if (pool.stopping) {
            pthread_mutex_unlock(&pool.lock);
            return NULL;
        }
        seen = atomic_load(&pool.job);
        quick = pool.given_at - done_at <= SPIN_NS;
        if (id >= pool.parts) {
            done_at = pool.given_at;
            continue;
        }
        const ebm__rows_fn fn = pool.fn;
        void *ctx = pool.ctx;
        const int64_t n = pool.n;
        const int parts = pool.parts;
        pthread_mutex_unlock(&pool.lock);
        fn(ctx, part_begin(n, parts, id), part_end(n, parts, id), id);
        done_at = now_ns();
        pthread_mutex_lock(&pool.lock);
        if (atomic_fetch_sub(&pool.remaining, 1) == 1) {
            pthread_cond_signal(&pool.done);
        }
    }
}

/* In a forked child the workers do not exist: forget them. */
static void atfork_child(void)
{
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.started = 0;
    pool.stopping = 0;
    atomic_flag_clear(&taken);
}

static void register_atfork(void)
{
    pthread_atfork(NULL, NULL, atfork_child);
}

/* Start workers up to `want` threads in all (caller included), under the
 * pool's lock; returns the threads available. A worker that cannot be
 * started leaves the loop with fewer threads (the same results). */
static int start_workers(int want)
{
    pthread_once(&atfork_once, register_atfork);
    while (pool.started + 1 < want) {
        pthread_attr_t attr;
        if (pthread_attr_init(&attr) != 0) {
            break;
        }
        pthread_attr_setstacksize(&attr, 1u << 20);
        const int id = pool.started + 1;
        pool.born[id] = atomic_load(&pool.job);
        const int rc = pthread_create(&pool.worker[id], &attr, worker_main, (void *)(intptr_t)id);
        pthread_attr_destroy(&attr);
        if (rc != 0) {
            break;
        }
        pool.started = id;
    }
    return pool.started + 1;
}

/* Stop and join the workers when the library is unloaded (not while a loop
 * runs: then the process is ending under it and the workers go with it). */
__attribute__((destructor)) static void stop_workers(void)
{
    if (atomic_flag_test_and_set(&taken)) {
        return;
    }
    pthread_mutex_lock(&pool.lock);
    const int started = pool.started;
    pool.stopping = 1;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    for (int id = 1; id <= started; id++) {
        pthread_join(pool.worker[id], NULL);
    }
    pool.started = 0;
    pool.stopping = 0;
    atomic_flag_clear(&taken);
}

void ebm__for_rows(int64_t n, int64_t work, int threads, ebm__rows_fn fn, void *ctx)
{
    int parts = threads > 0 ? threads : ebm__threads();
    parts = (int64_t)parts > n ? (int)n : parts;
    if (parts < 2 || work < atomic_load_explicit(&min_work, memory_order_relaxed) || atomic_flag_test_and_set(&taken)) {
        fn(ctx, 0, n, 0);
        return;
    }
    pthread_mutex_lock(&pool.lock);
    const int have = start_workers(parts);
    parts = have < parts ? have : parts;
    pool.fn = fn;
    pool.ctx = ctx;
    pool.n = n;
    pool.parts = parts;
    atomic_store(&pool.remaining, parts - 1);
    pool.given_at = now_ns();
    atomic_fetch_add(&pool.job, 1);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    fn(ctx, 0, part_end(n, parts, 0), 0);

    const int64_t mine = now_ns();
    while (atomic_load_explicit(&pool.remaining, memory_order_acquire) > 0 &&
           now_ns() - mine <= SPIN_NS) {
        cpu_relax();
    }
    pthread_mutex_lock(&pool.lock);
    while (atomic_load(&pool.remaining) > 0) {
        pthread_cond_wait(&pool.done, &pool.lock);
    }
    pthread_mutex_unlock(&pool.lock);
    atomic_flag_clear(&taken);
}

#else /* _OPENMP: OpenMP's threads, with the same parts */

void ebm__for_rows(int64_t n, int64_t work, int threads, ebm__rows_fn fn, void *ctx)
{
    int parts = threads > 0 ? threads : ebm__threads();
    parts = (int64_t)parts > n ? (int)n : parts;
    if (parts < 2 || work < atomic_load_explicit(&min_work, memory_order_relaxed) || omp_in_parallel()) {
        fn(ctx, 0, n, 0);
        return;
    }
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; p++) {
        fn(ctx, part_begin(n, parts, p), part_end(n, parts, p), p);
    }
}

#endif
