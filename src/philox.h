/*
 * Philox4x32-10 (Salmon et al. 2011): the constants and the scalar block
 * function, shared by rng.c and the vectorised kernels (simd/kernels.c),
 * whose vector rounds are these rounds a block per lane.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_PHILOX_H
#define EBM_PHILOX_H

#include <stdint.h>

#define EBM__PHILOX_M0 0xD2511F53u /* multiplies counter word 0 */
#define EBM__PHILOX_M1 0xCD9E8D57u /* multiplies counter word 2 */
#define EBM__PHILOX_W0 0x9E3779B9u /* Weyl key bumps: golden ratio, */
#define EBM__PHILOX_W1 0xBB67AE85u /* sqrt(3) - 1 */

/* One Philox round, in place. */
#define EBM__PHILOX_ROUND(c0, c1, c2, c3, k0, k1)                                                    \
    do {                                                                                        \
        uint64_t p0_ = (uint64_t)EBM__PHILOX_M0 * (c0);                                              \
        uint64_t p1_ = (uint64_t)EBM__PHILOX_M1 * (c2);                                              \
        uint32_t hi0_ = (uint32_t)(p0_ >> 32), lo0_ = (uint32_t)p0_;                            \
        uint32_t hi1_ = (uint32_t)(p1_ >> 32), lo1_ = (uint32_t)p1_;                            \
        (c0) = hi1_ ^ (c1) ^ (k0);                                                              \
        (c1) = lo1_;                                                                            \
        (c2) = hi0_ ^ (c3) ^ (k1);                                                              \
        (c3) = lo0_;                                                                            \
    } while (0)

/* Between rounds the key moves by the Weyl constants. */
#define EBM__PHILOX_BUMP_ROUND(c0, c1, c2, c3, k0, k1)                                               \
    do {                                                                                        \
        (k0) += EBM__PHILOX_W0;                                                                      \
        (k1) += EBM__PHILOX_W1;                                                                      \
        EBM__PHILOX_ROUND(c0, c1, c2, c3, k0, k1);                                                   \
    } while (0)

/* The block function, ten rounds written out: one call gives four words. */
static inline void ebm__philox_block(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0,
                                     uint32_t k1, uint32_t out[4])
{
    EBM__PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
    EBM__PHILOX_BUMP_ROUND(c0, c1, c2, c3, k0, k1);
    EBM__PHILOX_BUMP_ROUND(c0, c1, c2, c3, k0, k1);
    EBM__PHILOX_BUMP_ROUND(c0, c1, c2, c3, k0, k1);
    EBM__PHILOX_BUMP_ROUND(c0, c1, c2, c3, k0, k1);
    EBM__PHILOX_BUMP_ROUND(c0, c1, c2, c3, k0, k1);
    EBM__PHILOX_BUMP_ROUND(c0, c1, c2, c3, k0, k1);
    EBM__PHILOX_BUMP_ROUND(c0, c1, c2, c3, k0, k1);
    EBM__PHILOX_BUMP_ROUND(c0, c1, c2, c3, k0, k1);
    EBM__PHILOX_BUMP_ROUND(c0, c1, c2, c3, k0, k1);
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

#endif /* EBM_PHILOX_H */
