/* The model handle: its life cycle (creation, destruction, the caches
 * derived from the parameters), its message slot, and its shape and
 * parameter layout. Parameters: params.c; argument checks: checks.c;
 * initialisation: init.c; centring offsets: centring.c. */
#include "error.h"
#include "model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The name of a kind of unit, for messages. */
static const char *units_name(int units)
{
    switch (units) {
    case EBM_UNITS_BINARY: return "binary";
    case EBM_UNITS_SPIN: return "spin";
    case EBM_UNITS_GAUSSIAN: return "Gaussian";
    case EBM_UNITS_POTTS: return "Potts";
    case EBM_UNITS_DRELU: return "dReLU";
    default: return "unknown";
    }
}

/* ---- messages --------------------------------------------------------- */

int ebm__model_set_error(const ebm_model_t *m, int code, const ebm__msg *msg)
{
    /* The slot is logically mutable: const calls may fail and must leave a
     * message, so the cast is deliberate and the lock makes it safe. */
    ebm_model_t *mm = (ebm_model_t *)(uintptr_t)m;
    pthread_mutex_lock(&mm->lock);
    ebm__copy_text(mm->errmsg, sizeof mm->errmsg, msg->text);
    pthread_mutex_unlock(&mm->lock);
    return code;
}

int ebm__model_error(const ebm_model_t *m, int code, const char *fmt, ...)
{
    ebm__msg msg;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg.text, sizeof msg.text, fmt, ap);
    va_end(ap);
    return ebm__model_set_error(m, code, &msg);
}

const char *ebm_model_errmsg(const ebm_model_t *m)
{
    return m == NULL ? "model is NULL" : m->errmsg;
}

int ebm_model_errmsg_copy(const ebm_model_t *m, char *buf, size_t size)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    if (buf == NULL) {
        return ebm__model_error(m, EBM_ENULL, "buf is NULL");
    }
    ebm_model_t *mm = (ebm_model_t *)(uintptr_t)m;
    pthread_mutex_lock(&mm->lock);
    ebm__copy_text(buf, size, mm->errmsg);
    pthread_mutex_unlock(&mm->lock);
    return EBM_OK;
}

/* ---- creation --------------------------------------------------------- */

static void model_free(ebm_model_t *m)
{
    free(m->params);
    free(m->params_d);
    free(m->inv_var);
    free(m->inv_var_d);
    free(m->w1_scaled);
    free(m->w1_scaled_d);
    free(m->mu);
    free(m->bias);
    free(m->bias_d);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

int ebm__model_new(ebm_model_t **out, ebm__msg *msg, int64_t n_layers, const int64_t *sizes,
                   int visible_units, int hidden_units, const int64_t *categories_given)
{
    if (out == NULL) {
        return ebm__fail(msg, EBM_ENULL, "out is NULL");
    }
    *out = NULL;
    if (sizes == NULL) {
        return ebm__fail(msg, EBM_ENULL, "sizes is NULL");
    }
    if (n_layers < 2 || n_layers > EBM_MAX_LAYERS) {
        return ebm__fail(msg, EBM_ESHAPE, "n_layers is %lld; it must be from 2 to %d",
                         (long long)n_layers, EBM_MAX_LAYERS);
    }
    if (visible_units != EBM_UNITS_BINARY && visible_units != EBM_UNITS_SPIN &&
        visible_units != EBM_UNITS_GAUSSIAN && visible_units != EBM_UNITS_POTTS) {
        return ebm__fail(msg, EBM_EVALUE,
                         "visible_units is %d; it must be EBM_UNITS_BINARY (0), "
                         "EBM_UNITS_SPIN (1), EBM_UNITS_GAUSSIAN (2) or EBM_UNITS_POTTS (3)",
                         visible_units);
    }
    if (visible_units == EBM_UNITS_POTTS && categories_given == NULL) {
        return ebm__fail(msg, EBM_EVALUE,
                         "visible_units is EBM_UNITS_POTTS (3): create the model with "
                         "ebm_model_create_potts, which takes the number of categories");
    }
    const int64_t categories = categories_given != NULL ? *categories_given : 1;
    if (visible_units == EBM_UNITS_POTTS &&
        (categories < 2 || categories > EBM__MAX_CATEGORIES)) {
        return ebm__fail(msg, EBM_EVALUE, "categories is %lld; it must be from 2 to %d",
                         (long long)categories, EBM__MAX_CATEGORIES);
    }
    if (hidden_units != EBM_UNITS_BINARY && hidden_units != EBM_UNITS_SPIN &&
        hidden_units != EBM_UNITS_DRELU) {
        return ebm__fail(msg, EBM_EVALUE,
                         "hidden_units is %d; it must be EBM_UNITS_BINARY (0), "
                         "EBM_UNITS_SPIN (1) or EBM_UNITS_DRELU (4)",
                         hidden_units);
    }
    if (hidden_units == EBM_UNITS_DRELU && n_layers != 2) {
        return ebm__fail(msg, EBM_EUNSUPPORTED,
                         "hidden_units is EBM_UNITS_DRELU with n_layers %lld: dReLU units are "
                         "the hidden layer of an RBM (n_layers 2)",
                         (long long)n_layers);
    }
    if (hidden_units == EBM_UNITS_DRELU && visible_units == EBM_UNITS_GAUSSIAN) {
        return ebm__fail(msg, EBM_EUNSUPPORTED,
                         "dReLU hidden units need discrete visible units (binary, spin or "
                         "Potts), not Gaussian ones");
    }
    int64_t width = 0, n_weights = 0, n_biases = 0;
    for (int64_t l = 0; l < n_layers; l++) {
        if (sizes[l] < 1 || sizes[l] > EBM__BLAS_MAX) {
            return ebm__fail(msg, EBM_ESHAPE, "sizes[%lld] is %lld; it must be from 1 to %lld",
                             (long long)l, (long long)sizes[l], (long long)EBM__BLAS_MAX);
        }
        if (l == 0 && visible_units == EBM_UNITS_POTTS && sizes[0] % categories != 0) {
            return ebm__fail(msg, EBM_ESHAPE,
                             "sizes[0] is %lld, not a multiple of categories (%lld): the "
                             "visible layer is sites of q one-hot columns",
                             (long long)sizes[0], (long long)categories);
        }
        width += sizes[l];
        if (width > EBM__BLAS_MAX) {
            return ebm__fail(msg, EBM_ELIMIT,
                             "the state width (sum of sizes) exceeds %lld, the largest BLAS stride",
                             (long long)EBM__BLAS_MAX);
        }
        n_biases += sizes[l];
        if (l > 0) {
            int64_t block;
            if (ebm__mul_overflow(sizes[l - 1], sizes[l], &block) ||
                block > (INT64_MAX / 16) - n_weights) {
                return ebm__fail(msg, EBM_ELIMIT, "W_%lld (%lld x %lld) is too large", (long long)l,
                                 (long long)sizes[l - 1], (long long)sizes[l]);
            }
            n_weights += block;
        }
    }
    int64_t n_logvar = visible_units == EBM_UNITS_GAUSSIAN ? sizes[0] : 0;
    int64_t n_shape = hidden_units == EBM_UNITS_DRELU ? 3 * sizes[1] : 0;
    int64_t n_params = n_weights + n_biases + n_logvar + n_shape;
    if ((uint64_t)n_params > SIZE_MAX / sizeof(double)) {
        return ebm__fail(msg, EBM_ELIMIT, "%lld parameters do not fit in memory",
                         (long long)n_params);
    }

    ebm_model_t *m = calloc(1, sizeof *m);
    if (m == NULL) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory allocating the model");
    }
    pthread_mutex_init(&m->lock, NULL);
    m->weights_d_valid = 1; /* zero params, zero params_d */
    m->n_layers = n_layers;
    m->width = width;
    m->n_params = n_params;
    int64_t col = 0, woff = 0, boff = n_weights;
    for (int64_t l = 0; l < n_layers; l++) {
        m->size[l] = sizes[l];
        m->column[l] = col;
        col += sizes[l];
        m->units[l] = l == 0 ? visible_units : hidden_units;
        m->categories[l] = l == 0 && visible_units == EBM_UNITS_POTTS ? categories : 1;
        if (sizes[l] > m->max_size) {
            m->max_size = sizes[l];
        }
        if (l > 0) {
            m->w_off[l] = woff;
            woff += sizes[l - 1] * sizes[l];
        }
        m->b_off[l] = boff;
        boff += sizes[l];
    }
    m->logvar_off = n_logvar > 0 ? boff : -1;
    m->shape_off = n_shape > 0 ? boff + n_logvar : -1;
    m->params = calloc((size_t)n_params, sizeof *m->params);
    m->params_d = calloc((size_t)n_params, sizeof *m->params_d);
    m->mu = calloc((size_t)width, sizeof *m->mu);
    m->bias = malloc((size_t)width * sizeof *m->bias);
    m->bias_d = malloc((size_t)width * sizeof *m->bias_d);
    int ok = m->params != NULL && m->params_d != NULL && m->mu != NULL && m->bias != NULL &&
             m->bias_d != NULL;
    if (n_logvar > 0 && ok) {
        size_t n0 = (size_t)sizes[0], w1 = (size_t)(sizes[0] * sizes[1]);
        m->inv_var = malloc(n0 * sizeof *m->inv_var);
        m->inv_var_d = malloc(n0 * sizeof *m->inv_var_d);
        m->w1_scaled = malloc(w1 * sizeof *m->w1_scaled);
        m->w1_scaled_d = malloc(w1 * sizeof *m->w1_scaled_d);
        ok = m->inv_var != NULL && m->inv_var_d != NULL && m->w1_scaled != NULL &&
             m->w1_scaled_d != NULL;
    }
    if (!ok) {
        model_free(m);
        return ebm__fail(msg, EBM_ENOMEM, "out of memory allocating %lld parameters",
                         (long long)n_params);
    }
    ebm__model_refresh(m);
    *out = m;
    return EBM_OK;
}

int ebm_model_create(ebm_model_t **out, int64_t n_layers, const int64_t *sizes,
                     int visible_units, int hidden_units, char *errbuf, size_t errbuf_size)
{
    ebm__msg msg;
    int rc = ebm__model_new(out, &msg, n_layers, sizes, visible_units, hidden_units, NULL);
    if (rc != EBM_OK) {
        ebm__copy_text(errbuf, errbuf_size, msg.text);
    }
    return rc;
}

int ebm_model_create_potts(ebm_model_t **out, int64_t n_layers, const int64_t *sizes,
                           int64_t categories, int hidden_units, char *errbuf, size_t errbuf_size)
{
    ebm__msg msg;
    int rc = ebm__model_new(out, &msg, n_layers, sizes, EBM_UNITS_POTTS, hidden_units,
                            &categories);
    if (rc != EBM_OK) {
        ebm__copy_text(errbuf, errbuf_size, msg.text);
    }
    return rc;
}

void ebm_model_destroy(ebm_model_t *m)
{
    if (m != NULL) {
        model_free(m);
    }
}

/* The Gaussian caches from the parameters (contract in model.h). */
void ebm__refresh_gaussian(ebm_model_t *m)
{
    if (m->logvar_off < 0) {
        return;
    }
    int64_t n0 = m->size[0], n1 = m->size[1];
    const float *w1 = m->params + m->w_off[1];
    for (int64_t i = 0; i < n0; i++) {
        double inv = exp(-(double)m->params[m->logvar_off + i]);
        m->inv_var_d[i] = inv;
        m->inv_var[i] = (float)inv;
        for (int64_t j = 0; j < n1; j++) {
            m->w1_scaled_d[i * n1 + j] = inv * (double)w1[i * n1 + j];
            m->w1_scaled[i * n1 + j] = (float)m->w1_scaled_d[i * n1 + j];
        }
    }
}

void ebm__refresh_bias(ebm_model_t *m)
{
    const int64_t nb = m->width;
    if (!m->centred) {
        memcpy(m->bias, m->params + m->b_off[0], (size_t)nb * sizeof *m->bias);
        memcpy(m->bias_d, m->params_d + m->b_off[0], (size_t)nb * sizeof *m->bias_d);
        m->shift = 0.0;
        return;
    }
    /* bt = b - (the offsets through W); c = b.mu - sum_l mu_{l-1}^T W_l
     * mu_l = b.mu + (bt - b).mu / 2, each coupling counted from both its
     * layers. */
    const double *b = m->params_d + m->b_off[0];
    memcpy(m->bias_d, b, (size_t)nb * sizeof *m->bias_d);
    ebm__add_coupled(m, m->mu, NULL, -1.0, m->bias_d);
    double c = 0.0;
    for (int64_t j = 0; j < nb; j++) {
        c += (double)m->mu[j] * (b[j] + 0.5 * (m->bias_d[j] - b[j]));
        m->bias[j] = (float)m->bias_d[j];
    }
    m->shift = c;
}

void ebm__add_coupled(const ebm_model_t *m, const float *x, const float *x0, double alpha,
                      double *out)
{
    /* Only binary, spin and Potts layers have offsets (centring.c), so every
     * layer couples through W_l itself. */
    for (int64_t l = 1; l < m->n_layers; l++) {
        const int64_t na = m->size[l - 1], nl = m->size[l];
        const int64_t oa = m->column[l - 1], ol = m->column[l];
        const double *w = ebm__weights_d(m) + m->w_off[l];
        for (int64_t i = 0; i < na; i++) {
            const double *wi = w + i * nl;
            const double da = (double)x[oa + i] - (x0 != NULL ? (double)x0[oa + i] : 0.0);
            double s = 0.0;
            for (int64_t j = 0; j < nl; j++) {
                s += wi[j] * ((double)x[ol + j] - (x0 != NULL ? (double)x0[ol + j] : 0.0));
                out[ol + j] += alpha * da * wi[j];
            }
            out[oa + i] += alpha * s;
        }
    }
}

const double *ebm__weights_d(const ebm_model_t *m)
{
    if (!__atomic_load_n(&m->weights_d_valid, __ATOMIC_ACQUIRE)) {
        ebm_model_t *mm = (ebm_model_t *)(uintptr_t)m; /* logically mutable cache */
        pthread_mutex_lock(&mm->lock);
        if (!__atomic_load_n(&mm->weights_d_valid, __ATOMIC_RELAXED)) {
            for (int64_t i = 0; i < mm->b_off[0]; i++) {
                mm->params_d[i] = mm->params[i];
            }
            __atomic_store_n(&mm->weights_d_valid, 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&mm->lock);
    }
    return m->params_d;
}

void ebm__model_refresh(ebm_model_t *m)
{
    for (int64_t i = 0; i < m->n_params; i++) {
        m->params_d[i] = m->params[i];
    }
    __atomic_store_n(&m->weights_d_valid, 1, __ATOMIC_RELAXED);
    ebm__refresh_gaussian(m);
    ebm__refresh_bias(m);
    m->bounds_valid = 0;
}

/* ---- shape accessors -------------------------------------------------- */

int ebm_max_layers(void) { return EBM_MAX_LAYERS; }

int64_t ebm_model_num_layers(const ebm_model_t *m) { return m == NULL ? -1 : m->n_layers; }

int64_t ebm_model_layer_size(const ebm_model_t *m, int64_t l)
{
    return (m == NULL || l < 0 || l >= m->n_layers) ? -1 : m->size[l];
}

int64_t ebm_model_layer_offset(const ebm_model_t *m, int64_t l)
{
    return (m == NULL || l < 0 || l >= m->n_layers) ? -1 : m->column[l];
}

int ebm_model_layer_units(const ebm_model_t *m, int64_t l)
{
    return (m == NULL || l < 0 || l >= m->n_layers) ? -1 : m->units[l];
}

int64_t ebm_model_layer_categories(const ebm_model_t *m, int64_t l)
{
    return (m == NULL || l < 0 || l >= m->n_layers) ? -1 : m->categories[l];
}

int64_t ebm_model_state_width(const ebm_model_t *m) { return m == NULL ? -1 : m->width; }

int64_t ebm_model_param_count(const ebm_model_t *m) { return m == NULL ? -1 : m->n_params; }

int ebm_model_param_block(const ebm_model_t *m, int kind, int64_t l, int64_t *offset,
                          int64_t *rows, int64_t *cols)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    int64_t off, r, c;
    switch (kind) {
    case EBM_PARAM_WEIGHT:
        if (l < 1 || l >= m->n_layers) {
            return ebm__model_error(m, EBM_ESHAPE, "l is %lld; weight blocks are W_1 .. W_%lld",
                                    (long long)l, (long long)(m->n_layers - 1));
        }
        off = m->w_off[l];
        r = m->size[l - 1];
        c = m->size[l];
        break;
    case EBM_PARAM_BIAS:
        if (l < 0 || l >= m->n_layers) {
            return ebm__model_error(m, EBM_ESHAPE, "l is %lld; bias blocks are b_0 .. b_%lld",
                                    (long long)l, (long long)(m->n_layers - 1));
        }
        off = m->b_off[l];
        r = 1;
        c = m->size[l];
        break;
    case EBM_PARAM_SHAPE:
        if (m->shape_off < 0 || l != 1) {
            return ebm__model_error(
                m, m->shape_off < 0 ? EBM_EUNSUPPORTED : EBM_ESHAPE,
                "kind is EBM_PARAM_SHAPE with l %lld: the shape block belongs to a "
                "dReLU layer, and %s", (long long)l,
                m->shape_off < 0 ? "this model has none" : "this model's is layer 1");
        }
        off = m->shape_off;
        r = 3;
        c = m->size[1];
        break;
    case EBM_PARAM_LOGVAR:
        if (m->logvar_off < 0) {
            return ebm__model_error(
                m, EBM_EUNSUPPORTED,
                "kind is EBM_PARAM_LOGVAR but the visible units are %s, not Gaussian",
                units_name(m->units[0]));
        }
        if (l != 0) {
            return ebm__model_error(m, EBM_ESHAPE, "l is %lld; the log-variance block is layer 0",
                                    (long long)l);
        }
        off = m->logvar_off;
        r = 1;
        c = m->size[0];
        break;
    default:
        return ebm__model_error(m, EBM_EVALUE,
                                "kind is %d; it must be EBM_PARAM_WEIGHT (0), EBM_PARAM_BIAS (1), "
                                "EBM_PARAM_LOGVAR (2) or EBM_PARAM_SHAPE (3)", kind);
    }
    if (offset != NULL) {
        *offset = off;
    }
    if (rows != NULL) {
        *rows = r;
    }
    if (cols != NULL) {
        *cols = c;
    }
    return EBM_OK;
}
