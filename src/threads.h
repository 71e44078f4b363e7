/*
 * Row loops on OpenMP threads when the library is built with OpenMP.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_THREADS_H
#define EBM_THREADS_H

#include <stdint.h>

/* for (int64_t r = 0; r < n; r++) { body }: a loop over independent rows,
 * on OpenMP threads when the library is built with OpenMP and the loop has
 * at least EBM__PARALLEL_MIN units of work. Below that the plain loop runs
 * and no team is formed: `omp parallel if (0)` would still have libgomp
 * allocate a team of one per loop, a cost comparable to the work of the
 * short loops over few rows that small models run by the thousand. Each
 * row's draws come from its own stream row, so the results do not depend
 * on the number of threads. */
#define EBM__PARALLEL_MIN 32768
#if defined(_OPENMP)
#define EBM__PRAGMA(x) _Pragma(#x)
#define EBM__FOR_ROWS(r, n, work, ...)                                  \
    do {                                                                \
        if ((work) >= EBM__PARALLEL_MIN) {                              \
            EBM__PRAGMA(omp parallel for schedule(static))              \
            for (int64_t r = 0; r < (n); r++) {                         \
                __VA_ARGS__                                             \
            }                                                           \
        } else {                                                        \
            for (int64_t r = 0; r < (n); r++) {                         \
                __VA_ARGS__                                             \
            }                                                           \
        }                                                               \
    } while (0)
#else
#define EBM__FOR_ROWS(r, n, work, ...)          \
    do {                                        \
        for (int64_t r = 0; r < (n); r++) {     \
            __VA_ARGS__                         \
        }                                       \
    } while (0)
#endif
/* The threads a parallel loop may use, and this thread's number in it. */
int ebm__max_threads(void);
int ebm__thread_num(void);

#endif /* EBM_THREADS_H */
