/* ebm_model_init: orthogonal (Haar, by CholeskyQR2) and Gaussian weights,
 * and the papers' bias rules. */
#include "error.h"
#include "model.h"
#include "rng.h"
#include "threads.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* In place upper Cholesky of the k x k row-major symmetric matrix g (upper
 * triangle used): g = R^T R, R written over the upper triangle. Blocked, so
 * that the work is dtrsm and dsyrk. Returns 0, or -1 if g is not positive
 * definite to working precision. */
static int cholesky_upper(double *g, int k)
{
    const int nb = 64;
    for (int j0 = 0; j0 < k; j0 += nb) {
        int jb = k - j0 < nb ? k - j0 : nb;
        double *d = g + (size_t)j0 * k + j0;
        for (int i = 0; i < jb; i++) {
            double s = d[(size_t)i * k + i];
            for (int p = 0; p < i; p++) {
                s -= d[(size_t)p * k + i] * d[(size_t)p * k + i];
            }
            if (!(s > 0)) {
                return -1;
            }
            double r = sqrt(s);
            d[(size_t)i * k + i] = r;
            for (int j = i + 1; j < jb; j++) {
                double t = d[(size_t)i * k + j];
                for (int p = 0; p < i; p++) {
                    t -= d[(size_t)p * k + i] * d[(size_t)p * k + j];
                }
                d[(size_t)i * k + j] = t / r;
            }
        }
        int rest = k - j0 - jb;
        if (rest > 0) {
            double *panel = d + jb;
            EBM__BLAS(cblas_dtrsm(CblasRowMajor, CblasLeft, CblasUpper, CblasTrans, CblasNonUnit,
                                  jb, rest, 1.0, d, k, panel, k));
            double *g22 = g + (size_t)(j0 + jb) * k + j0 + jb;
            EBM__BLAS(cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, rest, jb, -1.0, panel, k,
                                  1.0, g22, k));
        }
    }
    return 0;
}

/* One CholeskyQR pass: a (rows x k, rows >= k) becomes a R^{-1} with
 * R^T R = a^T a. g is k x k scratch. */
static int cholesky_qr_pass(double *a, int rows, int k, double *g)
{
    EBM__BLAS(cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, k, rows, 1.0, a, k, 0.0, g, k));
    if (cholesky_upper(g, k) != 0) {
        return -1;
    }
    EBM__BLAS(cblas_dtrsm(CblasRowMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, rows,
                          k, 1.0, g, k, a, k));
    return 0;
}

/*
 * w (n_in x n_out) = scale * a Haar-random matrix with orthonormal columns
 * (n_in >= n_out) or rows. Mezzadri (2006): Q of A = QR for a Gaussian A,
 * with R's diagonal made positive. CholeskyQR yields exactly that R (a
 * Cholesky factor has a positive diagonal); two passes make Q orthogonal to
 * working precision. For Gaussian A, Q and R are independent, so redrawing A
 * when R is too ill-conditioned (an event of R alone) keeps Q Haar.
 */
static int init_orthogonal(float *w, int64_t n_in, int64_t n_out, ebm_rng_t *rng, double scale,
                           ebm__msg *msg)
{
    int rows = (int)(n_in >= n_out ? n_in : n_out);
    int k = (int)(n_in >= n_out ? n_out : n_in);
    size_t na = (size_t)rows * k;
    double *a = malloc(na * sizeof *a);
    double *g = malloc((size_t)k * k * sizeof *g);
    float *z = malloc(na * sizeof *z);
    if (a == NULL || g == NULL || z == NULL) {
        free(a);
        free(g);
        free(z);
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for a %d x %d orthogonal matrix", rows, k);
    }
    int rc = EBM_EINTERNAL;
    for (int attempt = 0; attempt < 8 && rc != EBM_OK; attempt++) {
        ebm__stream s = ebm__rng_take_stream(rng);
        ebm__stream_normal(&s, 0, 0, (int64_t)na, z);
        for (size_t i = 0; i < na; i++) {
            a[i] = z[i];
        }
        if (cholesky_qr_pass(a, rows, k, g) != 0 || cholesky_qr_pass(a, rows, k, g) != 0) {
            continue;
        }
        /* Accept only a Q orthonormal to 1e-10 (g = Q^T Q - I). */
        EBM__BLAS(
            cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, k, rows, 1.0, a, k, 0.0, g, k));
        double worst = 0;
        for (int i = 0; i < k; i++) {
            for (int j = i; j < k; j++) {
                double e = fabs(g[(size_t)i * k + j] - (i == j ? 1.0 : 0.0));
                worst = e > worst ? e : worst;
            }
        }
        if (worst < 1e-10) {
            rc = EBM_OK;
        }
    }
    if (rc == EBM_OK) {
        for (int64_t i = 0; i < n_in; i++) {
            for (int64_t j = 0; j < n_out; j++) {
                double q = n_in >= n_out ? a[(size_t)i * k + j] : a[(size_t)j * k + i];
                w[i * n_out + j] = (float)(scale * q);
            }
        }
    } else {
        ebm__fail(msg, rc, "orthogonalisation of a %d x %d Gaussian matrix failed 8 times", rows, k);
    }
    free(a);
    free(g);
    free(z);
    return rc;
}

int ebm_model_init(ebm_model_t *m, ebm_rng_t *rng, int scheme, double scale)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    if (rng == NULL) {
        return ebm__model_error(m, EBM_ENULL, "rng is NULL");
    }
    if (scheme != EBM_INIT_ORTHOGONAL && scheme != EBM_INIT_GAUSSIAN) {
        return ebm__model_error(
            m, EBM_EVALUE,
            "scheme is %d; it must be EBM_INIT_ORTHOGONAL (0) or EBM_INIT_GAUSSIAN (1)", scheme);
    }
    if (!(scale > 0) || !isfinite(scale) || scale > 1e30) {
        return ebm__model_error(m, EBM_EVALUE, "scale is %g; it must be > 0 and at most 1e30",
                                scale);
    }
    /* Work on a copy so that a failure changes nothing. */
    float *p = calloc((size_t)m->n_params, sizeof *p);
    if (p == NULL) {
        return ebm__model_error(m, EBM_ENOMEM, "out of memory for %lld parameters",
                                (long long)m->n_params);
    }
    const ebm__rng_mark rng_saved = ebm__rng_save(rng);
    for (int64_t l = 1; l < m->n_layers; l++) {
        float *w = p + m->w_off[l];
        int64_t nw = m->size[l - 1] * m->size[l];
        if (scheme == EBM_INIT_ORTHOGONAL) {
            int rc = init_orthogonal(w, m->size[l - 1], m->size[l], rng, scale, &msg);
            if (rc != EBM_OK) {
                free(p);
                ebm__rng_restore(rng, &rng_saved);
                return ebm__model_set_error(m, rc, &msg);
            }
        } else {
            ebm__stream s = ebm__rng_take_stream(rng);
            ebm__stream_normal(&s, 0, 0, nw, w);
            for (int64_t i = 0; i < nw; i++) {
                w[i] = (float)(scale * w[i]);
            }
        }
    }
    /* Spin biases ~ Logistic(0, 0.5) (Taniguchi et al., appendix B):
     * b = 0.5 log(u / (1 - u)) with u in (0, 1). */
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (m->units[l] != EBM_UNITS_SPIN) {
            continue;
        }
        float *b = p + m->b_off[l];
        ebm__stream s = ebm__rng_take_stream(rng);
        ebm__stream_uniform(&s, 0, 0, m->size[l], b);
        for (int64_t j = 0; j < m->size[l]; j++) {
            double u = ((double)b[j] * 16777216.0 + 0.5) / 16777216.0;
            b[j] = (float)(0.5 * log(u / (1.0 - u)));
        }
    }
    memcpy(m->params, p, (size_t)m->n_params * sizeof *p);
    free(p);
    ebm__model_refresh(m);
    return EBM_OK;
}
