/* Which build of the elementwise kernels runs: chosen once per process
 * from the CPU's features (and EBM_SIMD, to compare builds).
 *
 * SPDX-License-Identifier: MIT
 */
#include "kernels.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

extern const ebm__kernels ebm__kernels_generic;
#if defined(EBM_SIMD_X86)
extern const ebm__kernels ebm__kernels_avx2;
extern const ebm__kernels ebm__kernels_avx512;
#endif

const ebm__kernels *ebm__kernels_level(int level)
{
    switch (level) {
    case 0: return &ebm__kernels_generic;
#if defined(EBM_SIMD_X86)
    case 1:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt")
                   ? &ebm__kernels_avx2
                   : NULL;
    case 2:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
                       __builtin_cpu_supports("popcnt")
                   ? &ebm__kernels_avx512
                   : NULL;
#endif
    default: return NULL;
    }
}

static const ebm__kernels *chosen;
static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;

static void choose(void)
{
    const char *want = getenv("EBM_SIMD");
    for (int level = 2; level >= 0; level--) {
        const ebm__kernels *k = ebm__kernels_level(level);
        if (k != NULL && (want == NULL || *want == '\0' || strcmp(want, k->name) == 0)) {
            chosen = k;
            return;
        }
    }
    chosen = &ebm__kernels_generic; /* an unknown or unavailable name */
}

const ebm__kernels *ebm__kern(void)
{
    pthread_once(&chosen_once, choose);
    return chosen;
}

void ebm__kernels_use(const ebm__kernels *k)
{
    pthread_once(&chosen_once, choose);
    chosen = k;
}
