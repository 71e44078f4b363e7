/* The trainers' evaluation (trainer_run.h): the base AIS starts from
 * (--ais-base data), the held-out log-likelihood during training
 * (--eval-every), and the final evaluation: exact where enumeration is
 * cheap, else AIS with its bias check, the log-likelihood (a DBM's
 * mean-field bound and IS estimate), and the base's own log-likelihood.
 * The held-out score itself is heldout.c's, shared with train_grbm. */
#include "trainer_run.h"

#include "cli.h"
#include "data.h"
#include "heldout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int64_t smaller_parity_class(const ebm_model_t *m, int hidden_only)
{
    int64_t even = 0, odd = 0;
    for (int64_t l = hidden_only ? 1 : 0; l < ebm_model_num_layers(m); l++) {
        /* A layer of Potts sites has q^sites states: sites log2 q bits; a
         * dReLU layer cannot be enumerated. */
        const int64_t q = ebm_model_layer_categories(m, l), size = ebm_model_layer_size(m, l);
        const int64_t bits = ebm_model_layer_units(m, l) == EBM_UNITS_DRELU ? INT64_C(1) << 40
                             : q > 1 ? (int64_t)ceil((double)(size / q) * log2((double)q))
                                     : size;
        if (l % 2 == 0) {
            even += bits;
        } else {
            odd += bits;
        }
    }
    if (hidden_only && ebm_model_num_layers(m) == 2) {
        return 0; /* an RBM's hidden layer is summed out */
    }
    return even < odd && even > 0 ? even : odd;
}

/* The mean log-likelihood of n encoded rows under AIS's base alone
 * (--ais-base data): independent units, or independent Potts sites, with the
 * training data's frequencies: the yardstick of a model without weights. */
static double base_loglik(const run *r, int64_t n, const float *x)
{
    const int64_t d = r->dim, q = r->c->units == TRAINER_POTTS ? r->c->levels : 1;
    const int spin = r->c->units == TRAINER_SPIN;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const float *xi = x + i * d;
        for (int64_t j = 0; j < d; j += q) {
            const float *b = r->ais_base + j;
            if (q == 1) { /* log sigmoid(+-logit) */
                const double logit = spin ? 2.0 * b[0] : b[0];
                const double z = xi[j] > (spin ? 0.0f : 0.5f) ? logit : -logit;
                sum -= z > 0.0 ? log1p(exp(-z)) : log1p(exp(z)) - z;
                continue;
            }
            double top = b[0], lse = 0.0, on = 0.0;
            for (int64_t k = 1; k < q; k++) {
                top = b[k] > top ? b[k] : top;
            }
            for (int64_t k = 0; k < q; k++) {
                lse += exp(b[k] - top);
                on += xi[j + k] > 0.5f ? b[k] : 0.0;
            }
            sum += on - top - log(lse);
        }
    }
    return sum / (double)n;
}

const char *trainer_data_base_unfit(const ebm_model_t *m)
{
    switch (ebm_model_layer_units(m, 0)) {
    case EBM_UNITS_BINARY:
    case EBM_UNITS_SPIN:
    case EBM_UNITS_POTTS:
        return NULL;
    case EBM_UNITS_GAUSSIAN:
        return "Gaussian visible units start from N(mu, sigma^2), the model's own";
    default:
        return "these visible units have no base from the data's means";
    }
}

/* --ais-base data: the visible biases of AIS's base distribution, the
 * log-odds of trainer_training_means (spin units: half the log-odds of +1; Potts
 * sites, whose base is the softmax of a site's biases: the log-frequencies).
 * Where the visible units have none (trainer_data_base_unfit), AIS starts
 * from uniform units and the run says why. */
int trainer_prepare_ais_base(run *r)
{
    const trainer_config *c = r->c;
    if (c->ais_base == 0 || c->eval == TRAINER_EVAL_NONE) {
        return 0;
    }
    r->ais_base_note = trainer_data_base_unfit(r->m);
    if (r->ais_base_note != NULL) {
        if (r->root) {
            fprintf(stderr, "%s: note: AIS starts from uniform units, not the data's pixel "
                    "means: %s\n", c->prog, r->ais_base_note);
        }
        return 0;
    }
    const int64_t d = r->dim;
    double *p = malloc((size_t)d * sizeof *p);
    r->ais_base = malloc((size_t)d * sizeof *r->ais_base);
    if (p == NULL || r->ais_base == NULL) {
        free(p);
        return trainer_complain(c, "--ais-base data: out of memory");
    }
    if (trainer_training_means(r, p, "--ais-base data") != 0) {
        free(p);
        return 1;
    }
    for (int64_t j = 0; j < d; j++) {
        const double logit = log(p[j] / (1.0 - p[j]));
        r->ais_base[j] = (float)(c->units == TRAINER_SPIN    ? 0.5 * logit
                                 : c->units == TRAINER_POTTS ? log(p[j])
                                                             : logit);
    }
    free(p);
    return 0;
}

/*
 * --eval-every: fix the held-out rows (the first --eval-rows test images,
 * encoded once with stream HELDOUT_STREAM, so Bernoulli draws do not change
 * between evaluations) and the method: exact (log Z and log p(v) by
 * enumeration) under tighter limits than the final evaluation, else AIS with
 * --ais-chains x --eval-betas and, for a DBM, the mean-field bound. Names the
 * CSV column after the method.
 */
int trainer_prepare_heldout(run *r)
{
    const trainer_config *c = r->c;
    if (c->eval_every <= 0) {
        return 0;
    }
    const int64_t n = c->eval_rows > 0 && c->eval_rows < r->test.n ? c->eval_rows : r->test.n;
    ebm_rng_t *rng = NULL;
    char err[ERR_SIZE] = "";
    r->heldout_x = malloc((size_t)(n * r->dim) * sizeof *r->heldout_x);
    int rc = r->heldout_x != NULL ? ebm_rng_create(&rng, c->seed, HELDOUT_STREAM) : EBM_ENOMEM;
    if (rc != EBM_OK) {
        return trainer_complain(c, "--eval-every: out of memory");
    }
    rc = data_batch(&r->test, &r->enc, rng, NULL, n, r->heldout_x, r->dim, err, sizeof err);
    ebm_rng_destroy(rng);
    if (rc != DATA_OK) {
        return trainer_complain(c, "--eval-every data: %s", err);
    }
    r->heldout_n = n;
    const int64_t bits_z = smaller_parity_class(r->m, 0), bits_row = smaller_parity_class(r->m, 1);
    r->heldout_exact = c->eval == TRAINER_EVAL_AUTO && bits_z <= HELDOUT_LOG_Z_BITS &&
                       bits_row <= EXACT_ROW_BITS &&
                       (double)n * ldexp(1.0, (int)bits_row) <= HELDOUT_ROW_STATES;
    r->heldout_bound = !r->heldout_exact && ebm_model_num_layers(r->m) > 2;
    r->heldout_is = r->heldout_bound && c->is_samples > 0;
    r->heldout_column = r->heldout_exact   ? "heldout_loglik_exact"
                        : r->heldout_bound ? "heldout_loglik_ais_bound"
                                           : "heldout_loglik_ais";
    return 0;
}

/* The mean held-out log-likelihood (or bound) of m at this step, its log Z
 * (and AIS's standard error, else 0) and, for a DBM with --is-samples, the
 * mean IS estimate (else NaN). */
int trainer_heldout_evaluate(run *r, const ebm_model_t *m, int64_t step, double *ll_mean,
                             double *log_z, double *log_z_se, double *is_mean)
{
    const trainer_config *c = r->c;
    const heldout_set h = {.x = r->heldout_x, .n = r->heldout_n, .dim = r->dim,
                           .exact = r->heldout_exact, .bound = r->heldout_bound,
                           .is_samples = r->heldout_is ? c->is_samples : 0, .seed = c->seed,
                           .ais_stream = HELDOUT_STREAM, .is_stream = HELDOUT_IS_STREAM,
                           .ais_chains = c->ais_chains, .ais_betas = c->eval_betas,
                           .ais_base = r->ais_base};
    double *ll = malloc((size_t)h.n * sizeof *ll);
    if (ll == NULL) {
        return trainer_complain(c, "--eval-every: out of memory");
    }
    const int rc = heldout_score(&h, m, step, ll, ll_mean, log_z, log_z_se, is_mean);
    if (rc != EBM_OK) {
        trainer_complain(c, "--eval-every at step %lld: %s", (long long)step,
                         rc == EBM_ENOMEM ? "out of memory" : ebm_model_errmsg(m));
    }
    free(ll);
    return rc != EBM_OK;
}

int64_t trainer_check_chains(const trainer_config *c)
{
    return c->ais_check_chains > 0 ? c->ais_check_chains : c->ais_chains;
}

/* --ais-check: a second AIS of m with --ais-check times the betas, into
 * res->check_*. Its own generator: the check never moves AIS's. A failure
 * leaves NaN and a warning; the rest of the report stands. */
static void ais_check(const run *r, const ebm_model_t *m, result *res)
{
    const trainer_config *c = r->c;
    ebm_rng_t *check_rng = NULL;
    const double t = cli_now();
    int crc = ebm_rng_create(&check_rng, c->seed, AIS_CHECK_STREAM);
    if (crc == EBM_OK) {
        crc = ebm_model_log_partition_ais_base(m, check_rng, trainer_check_chains(c),
                                               c->ais_check * c->ais_betas, r->ais_base,
                                               &res->check_log_z, &res->check_log_z_se);
    }
    const int no_rng = check_rng == NULL;
    ebm_rng_destroy(check_rng);
    res->check_s = cli_now() - t;
    if (crc != EBM_OK) {
        res->check_log_z = res->check_log_z_se = NAN;
        trainer_complain(c, "warning: the AIS check failed (%s); the report goes on without it",
                         no_rng ? "out of memory" : ebm_model_errmsg(m));
    }
}

/* A DBM's IS estimate of log p(v) for the n test rows x with AIS's log Z
 * (ll: scratch of n), into res->is_*. Its own generator: the estimate never
 * moves AIS's. A failure leaves NaN and a warning; the rest of the report
 * stands. */
static void is_estimate(const run *r, const ebm_model_t *m, int64_t n, const float *x,
                        double *ll, result *res)
{
    const trainer_config *c = r->c;
    ebm_rng_t *is_rng = NULL;
    const double t = cli_now();
    int irc = ebm_rng_create(&is_rng, c->seed, FINAL_IS_STREAM);
    if (irc == EBM_OK) {
        irc = ebm_model_log_likelihood_is(m, is_rng, res->log_z, c->is_samples, n, x,
                                          r->dim, ll);
    }
    const int no_rng = is_rng == NULL;
    ebm_rng_destroy(is_rng);
    res->is_s = cli_now() - t;
    if (irc == EBM_OK) {
        res->is_ll_mean = heldout_mean(ll, n);
    } else {
        trainer_complain(c, "warning: the IS estimate failed (%s); the report goes on without it",
                         no_rng ? "out of memory" : ebm_model_errmsg(m));
    }
}

/* The test rows are encoded from stream 2, which AIS then continues. */
int trainer_evaluate(const run *r, const ebm_model_t *m, result *res)
{
    const trainer_config *c = r->c;
    res->log_z = res->log_z_se = res->exact_log_z = res->ll_mean = res->exact_ll_mean = NAN;
    res->is_ll_mean = res->check_log_z = res->check_log_z_se = res->base_ll_mean = NAN;
    res->check_s = 0.0;
    res->ais_s = res->ll_s = res->exact_s = res->is_s = 0.0;
    res->is_bound = ebm_model_num_layers(m) > 2;
    if (c->eval == TRAINER_EVAL_NONE) {
        return 0;
    }
    const int64_t n = r->test.n;
    float *x = malloc((size_t)(n * r->dim) * sizeof *x);
    double *ll = malloc((size_t)n * sizeof *ll);
    ebm_rng_t *rng = NULL;
    char err[ERR_SIZE] = "";
    int rc = x && ll ? ebm_rng_create(&rng, c->seed, 2) : EBM_ENOMEM;
    if (rc != EBM_OK) {
        free(x), free(ll);
        return trainer_complain(c, "evaluation: out of memory");
    }
    rc = data_batch(&r->test, &r->enc, rng, NULL, n, x, r->dim, err, sizeof err);
    if (rc != DATA_OK) {
        trainer_complain(c, "evaluation data: %s", err);
        goto done;
    }
    if (r->ais_base != NULL) {
        res->base_ll_mean = base_loglik(r, n, x);
    }
    /* Exact where enumeration is cheap: log Z enumerates the smaller parity
     * class; a DBM's log p(v) enumerates its smaller hidden class per row. */
    const int64_t bits_z = smaller_parity_class(m, 0), bits_row = smaller_parity_class(m, 1);
    const int exact = c->eval == TRAINER_EVAL_AUTO && bits_z <= EXACT_LOG_Z_BITS &&
                      bits_row <= EXACT_ROW_BITS && (double)n * ldexp(1.0, (int)bits_row) <= 1e9;
    if (exact) {
        double t = cli_now();
        rc = ebm_model_log_partition_exact(m, &res->exact_log_z);
        if (rc == EBM_OK) {
            rc = ebm_model_log_likelihood(m, res->exact_log_z, n, x, r->dim, ll);
        }
        if (rc != EBM_OK) {
            trainer_complain(c, "exact evaluation: %s", ebm_model_errmsg(m));
            goto done;
        }
        res->exact_ll_mean = heldout_mean(ll, n);
        res->exact_s = cli_now() - t;
    }
    if (!exact || res->is_bound) {
        double t = cli_now();
        rc = ebm_model_log_partition_ais_base(m, rng, c->ais_chains, c->ais_betas, r->ais_base,
                                              &res->log_z, &res->log_z_se);
        res->ais_s = cli_now() - t;
        if (rc != EBM_OK) {
            trainer_complain(c, "AIS: %s", ebm_model_errmsg(m));
            goto done;
        }
        if (c->ais_check > 0) {
            ais_check(r, m, res);
        }
        t = cli_now();
        rc = res->is_bound ? ebm_model_log_likelihood_bound(m, res->log_z, n, x, r->dim, ll)
                           : ebm_model_log_likelihood(m, res->log_z, n, x, r->dim, ll);
        res->ll_s = cli_now() - t;
        if (rc != EBM_OK) {
            trainer_complain(c, "log-likelihood: %s", ebm_model_errmsg(m));
            goto done;
        }
        res->ll_mean = heldout_mean(ll, n);
        if (res->is_bound && c->is_samples > 0) {
            is_estimate(r, m, n, x, ll, res);
        }
    }
done:
    ebm_rng_destroy(rng);
    free(x);
    free(ll);
    return rc != 0;
}
