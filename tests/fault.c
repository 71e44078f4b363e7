/* Allocation-failure injection for the tests. The test binary is linked
 * with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (Makefile), so every
 * allocation the library makes passes through here; OpenBLAS and the C
 * library, which are shared objects, allocate past it. Disarmed (the
 * default) it only forwards. */
#include "tests.h"

#include <stdlib.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t n);

static long fail_at;   /* 0: disarmed; else the allocation that fails */
static long seen;      /* allocations since t_fault_arm */
static int fired;

/* 1 if this allocation is the one to fail. Atomic: a library call may
 * allocate from OpenMP threads. */
static int inject(void)
{
    if (__atomic_load_n(&fail_at, __ATOMIC_RELAXED) == 0) {
        return 0;
    }
    long k = __atomic_add_fetch(&seen, 1, __ATOMIC_RELAXED);
    if (k == __atomic_load_n(&fail_at, __ATOMIC_RELAXED)) {
        __atomic_store_n(&fired, 1, __ATOMIC_RELAXED);
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t n) { return inject() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t count, size_t size)
{
    return inject() ? NULL : __real_calloc(count, size);
}
void *__wrap_realloc(void *p, size_t n) { return inject() ? NULL : __real_realloc(p, n); }

void t_fault_arm(long n)
{
    __atomic_store_n(&seen, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fired, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fail_at, n, __ATOMIC_RELAXED);
}

long t_fault_disarm(void)
{
    __atomic_store_n(&fail_at, 0, __ATOMIC_RELAXED);
    return __atomic_load_n(&seen, __ATOMIC_RELAXED);
}

int t_fault_fired(void) { return __atomic_load_n(&fired, __ATOMIC_RELAXED); }
