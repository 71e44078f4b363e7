/* The energies of binary, spin and Potts states that the MH kernels compare
 * in float: the coupling sums in float GEMMs (ebm__energy_fast) or from the
 * float input of layer 1 (ebm__energy_from_input), each with a certified
 * bound on its distance from the exact energy, cached in the model until
 * its parameters change. */
#include "model.h"
#include "energy.h"
#include "threads.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>

int ebm__energy_fast_ok(const ebm_model_t *m)
{
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (!ebm__is_discrete(m, l)) {
            return 0;
        }
    }
    return 1;
}

/*
 * With every |x_i| <= 1, the float sum t_j = sum_i x_i W_ij over K terms has
 * |fl(t_j) - t_j| <= gamma_K sum_i |W_ij|, gamma_K = K u / (1 - K u), u =
 * 2^-24, whatever the order of the additions (Higham, Accuracy and Stability
 * of Numerical Algorithms, 2nd ed., sec. 3.1); the products with x_j in
 * {-1, 0, 1} are exact, and so |e - E| <= sum_l gamma_{K_l} ||W_l||_1
 * (entrywise) for the terms summed in double afterwards. The double path's
 * own rounding (gamma_K with u = 2^-53) is added, so that a decision
 * outside twice this bound is the decision of either path.
 */
static double weight_norm(const ebm_model_t *m, int64_t l) /* sum |W_l|, entrywise */
{
    const float *wl = m->params + m->w_off[l];
    const int64_t count = m->size[l - 1] * m->size[l];
    double sum = 0.0;
    for (int64_t i = 0; i < count; i++) {
        sum += fabsf(wl[i]);
    }
    return sum;
}

static double bias_norm(const ebm_model_t *m, int64_t l)
{
    const float *b = m->bias + m->column[l];
    double sum = 0.0;
    for (int64_t j = 0; j < m->size[l]; j++) {
        sum += fabsf(b[j]);
    }
    return sum;
}

static double gamma_k(double k, double unit)
{
    return k * unit / (1.0 - k * unit);
}

static void compute_bounds(const ebm_model_t *m, double *fast, double *from_input)
{
    double wn[EBM_MAX_LAYERS] = {0.0}, bn = 0.0;
    *fast = 0.0;
    for (int64_t l = 1; l < m->n_layers; l++) {
        wn[l] = weight_norm(m, l);
        const double k = (double)m->size[l - 1], kd = k + (double)m->size[l] + 2.0;
        *fast += (gamma_k(k, 0x1p-24) + gamma_k(kd, 0x1p-53)) * wn[l] * (1.0 + 1e-6);
    }
    /* The bias sums (with c), in double in both paths but in different
     * orders. */
    const double gb = gamma_k((double)m->width + 2.0, 0x1p-53);
    bn = fabs(m->shift);
    for (int64_t l = 0; l < m->n_layers; l++) {
        bn += bias_norm(m, l);
    }
    *fast += 2.0 * gb * bn;
    if (from_input == NULL) {
        return;
    }
    /* a_1j is a float sum of the K = n_0 + n_2 + 1 exact terms b_1j, x_0i W_1ij
     * and x_2k W_2jk, in whatever order the GEMMs add them: within gamma_K
     * of their sums of magnitudes (Higham, as above), so x_1.a_1 with |x_1j|
     * <= 1 is within gamma_K (||b_1||_1 + ||W_1||_1 + ||W_2||_1). Both
     * paths' double sums are trees of at most 2 width + 2 additions over
     * terms whose magnitudes sum to at most the norms of all parameters. */
    const double k = (double)m->size[0] + (m->n_layers > 2 ? (double)m->size[2] : 0.0) + 1.0;
    const double n1 = bias_norm(m, 1) + wn[1] + wn[2];
    double all = bn;
    for (int64_t l = 1; l < m->n_layers; l++) {
        all += wn[l];
    }
    *from_input = gamma_k(k, 0x1p-24) * n1 * (1.0 + 1e-6) +
                  2.0 * gamma_k(2.0 * (double)m->width + 2.0, 0x1p-53) * all;
}

/* The bounds are O(parameters) to compute and change only with the
 * parameters: a one-row MH step must not pay for them, so the model keeps
 * them from their first use until its next change. */
void ebm__energy_bounds(const ebm_model_t *m, double *fast, double *from_input)
{
    ebm_model_t *mm = (ebm_model_t *)(uintptr_t)m; /* logically mutable cache */
    pthread_mutex_lock(&mm->lock);
    if (!mm->bounds_valid) {
        compute_bounds(m, &mm->bound_fast, &mm->bound_input);
        mm->bounds_valid = 1;
    }
    *fast = mm->bound_fast;
    if (from_input != NULL) {
        *from_input = mm->bound_input;
    }
    pthread_mutex_unlock(&mm->lock);
}

double ebm__energy_fast_bound(const ebm_model_t *m)
{
    double fast;
    ebm__energy_bounds(m, &fast, NULL);
    return fast;
}

void ebm__energy_from_input(const ebm_model_t *m, int64_t rows, const float *x, int64_t ldx,
                            const float *a1, double *e)
{
    const int64_t n1 = m->size[1];
    for (int64_t r = 0; r < rows; r++) {
        double s = m->shift;
        for (int64_t l = 0; l < m->n_layers; l++) {
            if (l == 1) {
                continue;
            }
            const double *b = m->bias_d + m->column[l];
            const float *xl = x + r * ldx + m->column[l];
            for (int64_t j = 0; j < m->size[l]; j++) {
                s -= b[j] * (double)xl[j];
            }
        }
        const float *x1 = x + r * ldx + m->column[1], *ar = a1 + r * n1;
        for (int64_t j = 0; j < n1; j++) {
            s -= (double)x1[j] * (double)ar[j];
        }
        e[r] = s;
    }
}

void ebm__energy_fast(const ebm_model_t *m, int64_t rows, const float *x, int64_t ldx, double *e,
                      float *t)
{
    for (int64_t r = 0; r < rows; r++) {
        double s = m->shift;
        for (int64_t l = 0; l < m->n_layers; l++) {
            const double *b = m->bias_d + m->column[l];
            const float *xl = x + r * ldx + m->column[l];
            for (int64_t j = 0; j < m->size[l]; j++) {
                s -= b[j] * (double)xl[j];
            }
        }
        e[r] = s;
    }
    for (int64_t l = 1; l < m->n_layers; l++) {
        const int nl = (int)m->size[l];
        EBM__BLAS(cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, nl,
                              (int)m->size[l - 1], 1.0f, x + m->column[l - 1], (int)ldx,
                              m->params + m->w_off[l], nl, 0.0f, t, nl));
        for (int64_t r = 0; r < rows; r++) {
            const float *xl = x + r * ldx + m->column[l], *tr = t + r * nl;
            double s = 0.0;
            for (int64_t j = 0; j < nl; j++) {
                s += (double)tr[j] * (double)xl[j];
            }
            e[r] -= s;
        }
    }
}
