/* The OpenMP thread queries of threads.h, also without OpenMP. */
#include "threads.h"

#if defined(_OPENMP)
#include <omp.h>
int ebm__max_threads(void) { return omp_get_max_threads(); }
int ebm__thread_num(void) { return omp_get_thread_num(); }
#else
int ebm__max_threads(void) { return 1; }
int ebm__thread_num(void) { return 0; }
#endif
