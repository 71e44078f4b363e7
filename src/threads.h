/*
 * The library's threads for its own row loops (draws, means, local-search
 * decisions and updates, coupled rows, Gaussian moves): a process-wide pool
 * of workers, or OpenMP's threads when the library is built with OpenMP
 * (Makefile: OPENMP). The contract is ebm.h's (ebm_set_num_threads);
 * docs/conventions.md, "Threads", says how the loops keep the same bits.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_THREADS_H
#define EBM_THREADS_H

#include <stdint.h>

/* The most threads a loop runs on (ebm_set_num_threads' range). */
#define EBM__MAX_THREADS 256

/* A loop shorter than EBM__PARALLEL_MIN units of work (about a
 * multiply-add each) runs on the calling thread, and so does one shorter
 * than EBM__PARALLEL_WAKE while the workers sleep: waking a sleeping worker
 * costs tens of microseconds, as much as the work of the short loops over
 * few rows that small models run by the thousand. */
#define EBM__PARALLEL_MIN 131072
#define EBM__PARALLEL_WAKE 1048576

/* The rows [begin, end) of a loop, on thread number `thread` (0 is the
 * calling thread; below the loop's thread count). */
typedef void (*ebm__rows_fn)(void *ctx, int64_t begin, int64_t end, int thread);

/* The threads a loop may use now: ebm_set_num_threads' value, or its
 * default (EBM_NUM_THREADS, else the CPUs the process may run on). A call
 * that keeps per-thread scratch sizes it with this value and passes the
 * same value to ebm__for_rows. */
int ebm__threads(void);

/* fn over the rows [0, n) in contiguous parts (a few per thread, taken in
 * turn by the calling thread and the workers) on at most `threads` threads
 * (ebm__threads() if 0). work is the loop's units of work (about a
 * multiply-add each); below EBM__PARALLEL_MIN, below EBM__PARALLEL_WAKE
 * while no worker is awake, with one thread, or while another loop has the
 * pool (a call from another of the user's threads, or a loop inside a
 * loop), fn runs on the calling thread as fn(ctx, 0, n, 0). Each row's
 * results must depend on that row alone,
 * so that they are the same bits for every split. Returns when every part
 * is done. */
void ebm__for_rows(int64_t n, int64_t work, int threads, ebm__rows_fn fn, void *ctx);

/* A BLAS call of the library's, marked so that the pool's workers stop
 * polling for jobs and leave the cores to the BLAS's threads. */
void ebm__blas_enter(void);
void ebm__blas_leave(void);
#define EBM__BLAS(call)                                                                         \
    do {                                                                                        \
        ebm__blas_enter();                                                                      \
        call;                                                                                   \
        ebm__blas_leave();                                                                      \
    } while (0)

#endif /* EBM_THREADS_H */
