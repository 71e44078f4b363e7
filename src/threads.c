/*
 * The library's threads (threads.h): the thread count and its setting
 * (ebm_set_num_threads, EBM_NUM_THREADS), and the pool that runs a row loop
 * in parts, one part per thread, or OpenMP's threads in the OpenMP build.
 *
 * The pool's workers are started by the first loop that needs them and
 * live until the process ends (or the library is unloaded). One loop has
 * the pool at a time; a loop that finds it taken runs on its own thread.
 * Between jobs a worker polls the job counter for up to a millisecond
 * (loops follow each other quickly in a local-search sweep), then sleeps on
 * a condition variable; it stops polling as soon as the library enters a
 * BLAS call (EBM__BLAS), so that it leaves the cores to the BLAS's threads
 * during the GEMMs. A forked child starts without workers and makes its own
 * when it needs them.
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

static atomic_int blas_calls; /* the library's BLAS calls in progress */

void ebm__blas_enter(void)
{
    atomic_fetch_add_explicit(&blas_calls, 1, memory_order_relaxed);
}

void ebm__blas_leave(void)
{
    atomic_fetch_sub_explicit(&blas_calls, 1, memory_order_relaxed);
}

#if !defined(_OPENMP)

/* How long a worker polls for its next job, and the caller for the
 * workers' parts, before they sleep: 1 millisecond, unless a BLAS call of
 * the library's begins (docs/performance.md, item 32). */
enum { SPIN_NS = 1000000 };

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

/* A job is cut into this many parts per thread, so that a thread slowed
 * by another (the BLAS's workers yield their cores only now and then)
 * holds up little of it: the others take its remaining parts. */
enum { PARTS_PER_THREAD = 4 };

/* A job's parts are taken through `claim`, the job's number times
 * CLAIM_SPAN plus the next part to take, so that a worker late for a job
 * can take no part of the next one. */
#define CLAIM_SPAN 4096 /* > PARTS_PER_THREAD * EBM__MAX_THREADS */

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
    int team;  /* threads 0..team-1 take parts */
    int parts;
    atomic_uint_fast64_t job;   /* jobs given so far: the current job's number */
    atomic_uint_fast64_t claim; /* job * CLAIM_SPAN + the next part to take */
    atomic_int remaining;       /* parts not yet done */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

static atomic_flag taken = ATOMIC_FLAG_INIT; /* a loop has the pool */
static atomic_int polling;                   /* workers polling for a job */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* Poll the job counter until it moves past `seen`, a BLAS call of the
 * library's begins, or SPIN_NS have passed. */
static void poll_jobs(uint_fast64_t seen)
{
    const int64_t from = now_ns();
    atomic_fetch_add(&polling, 1);
    for (int more = 1; more;) {
        for (int i = 0; i < 64 && more; i++) {
            more = atomic_load_explicit(&pool.job, memory_order_acquire) == seen &&
                   atomic_load_explicit(&blas_calls, memory_order_relaxed) == 0;
            cpu_relax();
        }
        more = more && now_ns() - from <= SPIN_NS;
    }
    atomic_fetch_sub(&polling, 1);
}

/* Take the next part of job `job` (of `parts`): its number, or -1 when
 * every part is taken or the job is over. */
static int take_part(uint_fast64_t job, int parts)
{
    uint_fast64_t c = atomic_load(&pool.claim);
    while (c / CLAIM_SPAN == job && (int)(c % CLAIM_SPAN) < parts) {
        if (atomic_compare_exchange_weak(&pool.claim, &c, c + 1)) {
            return (int)(c % CLAIM_SPAN);
        }
    }
    return -1;
}

/* Run parts of job `job` on thread `thread` until none is left; the one
 * that finishes the job's last part wakes the caller. */
static void run_parts(uint_fast64_t job, ebm__rows_fn fn, void *ctx, int64_t n, int parts,
                      int thread)
{
    for (int p; (p = take_part(job, parts)) >= 0;) {
        fn(ctx, part_begin(n, parts, p), part_end(n, parts, p), thread);
        if (atomic_fetch_sub(&pool.remaining, 1) == 1) {
            pthread_mutex_lock(&pool.lock);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.lock);
        }
    }
}

static void *worker_main(void *arg)
{
    const int id = (int)(intptr_t)arg;
    pthread_mutex_lock(&pool.lock);
    uint_fast64_t seen = pool.born[id]; /* the loop that started it is after this */
    for (;;) {
        /* Poll for a while, then sleep until the job changes. */
        pthread_mutex_unlock(&pool.lock);
        poll_jobs(seen);
        pthread_mutex_lock(&pool.lock);
        while (atomic_load(&pool.job) == seen && !pool.stopping) {
            pthread_cond_wait(&pool.wake, &pool.lock);
        }
        if (pool.stopping) {
            pthread_mutex_unlock(&pool.lock);
            return NULL;
        }
        seen = atomic_load(&pool.job);
        if (id >= pool.team) {
            continue;
        }
        const ebm__rows_fn fn = pool.fn;
        void *ctx = pool.ctx;
        const int64_t n = pool.n;
        const int parts = pool.parts;
        pthread_mutex_unlock(&pool.lock);
        run_parts(seen, fn, ctx, n, parts, id);
        pthread_mutex_lock(&pool.lock);
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
    atomic_store(&blas_calls, 0);
    atomic_store(&polling, 0);
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

/* The caller takes parts too, so a loop never waits for a worker to wake
 * up: parts that no worker has taken when the caller is free, it runs. A
 * loop under EBM__PARALLEL_WAKE units of work is split only if a worker is
 * awake (polling), as between the loops of a local-search sweep: waking a
 * sleeping one would cost it more than it saves. */
void ebm__for_rows(int64_t n, int64_t work, int threads, ebm__rows_fn fn, void *ctx)
{
    int team = threads > 0 ? threads : ebm__threads();
    team = (int64_t)team > n ? (int)n : team;
    const int64_t least = atomic_load_explicit(&min_work, memory_order_relaxed);
    const int small = work < least * (EBM__PARALLEL_WAKE / EBM__PARALLEL_MIN);
    if (team < 2 || work < least || (small && atomic_load(&polling) == 0) ||
        atomic_flag_test_and_set(&taken)) {
        fn(ctx, 0, n, 0);
        return;
    }
    pthread_mutex_lock(&pool.lock);
    const int have = start_workers(team);
    team = have < team ? have : team;
    const int parts = (int64_t)team * PARTS_PER_THREAD > n ? (int)n : team * PARTS_PER_THREAD;
    pool.fn = fn;
    pool.ctx = ctx;
    pool.n = n;
    pool.team = team;
    pool.parts = parts;
    atomic_store(&pool.remaining, parts);
    const uint_fast64_t job = atomic_load(&pool.job) + 1;
    atomic_store(&pool.claim, job * CLAIM_SPAN);
    atomic_store(&pool.job, job);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    run_parts(job, fn, ctx, n, parts, 0);

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
