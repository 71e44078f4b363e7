/* Bars-and-stripes (BAS) images (MacKay 2003; Schulz et al. 2010; Fischer and
 * Igel 2010), the data set of Qiu et al. (2020) section 6.1.
 *
 * A d x d BAS image is a binary image whose rows are all constant or whose
 * columns are all constant. Following the published experiments, the data set
 * has 2^(d+1) rows: for each pattern p = 0 .. 2^d - 1 (bit d-1-i of p is the
 * value of line i, most significant bit first), row 2p has image row i equal
 * to that bit ("stripes") and row 2p + 1 is its transpose, with column i
 * equal to it ("bars"). The all-0 and all-1 images are both stripes and
 * bars, so they appear twice: 2^(d+1) - 2 distinct images.
 */
#ifndef EXAMPLES_COMMON_BAS_H
#define EXAMPLES_COMMON_BAS_H

#include <stdint.h>

/** Largest side handled: 2^(d+1) rows must stay small. */
#define BAS_MAX_SIDE 12

/** @return the number of rows, 2^(d+1), or -1 if d is not in 1..BAS_MAX_SIDE. */
int64_t bas_rows(int d);
/**
 * Write the bas_rows(d) images, one per row of out, each d*d values 0.0f or
 * 1.0f in row-major pixel order.
 * @param ldo row stride of out, >= d*d
 * @return 0, or -1 (d out of range, out NULL, ldo too small)
 */
int bas_generate(int d, float *out, int64_t ldo);
/**
 * The largest log-likelihood any model can reach on the bas_rows(d) rows,
 * summed over the rows: that of the empirical distribution, which puts 1/N on
 * each image seen once and 2/N on the two seen twice (N = bas_rows(d)):
 *   (N - 4) log(1/N) + 4 log(2/N);  d = 4: -108.1341 (-3.3792 per row).
 * @return it, or NaN if d is out of range
 */
double bas_max_log_likelihood(int d);

#endif
