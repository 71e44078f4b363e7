/*
 * Meeting times of the Gibbs couplings on a fixed model, started as UCD
 * starts its chains (Qiu et al. 2020, Alg. 2): the law of tau under each
 * coupling, side by side, on the same model and the same starts.
 *
 *   x_0 = (v, h): v a data row (row r of the batch takes data row r mod N),
 *         h one sweep of p(h | v) from 0 (--start data), or every layer from
 *         uniform noise (--start noise);
 *   y_0 = x_0;  x_1 = one Gibbs step from x_0;
 *   coupled steps (x_t, y_{t-1}) -> (x_{t+1}, y_t) until x_t == y_{t-1}:
 *   tau = min { t >= 1 : x_t == y_{t-1} }, as the estimators count it.
 *
 * --batches batches of --chains pairs each; batch b of every coupling starts
 * from the same x_0 and x_1 (generator (seed, b)), then the coupled steps of
 * coupling k draw from the generator (seed, 2^32 + 64 b + k), so a
 * coupling's results do not depend on which others run. A pair that has not
 * met after --cap steps counts as tau = cap (capped). Met pairs leave the
 * batch.
 *
 * Output: one line per coupling (mean with its standard error, median, 99th
 * and 99.9th percentiles, maximum, capped pairs, coupled steps of one row on
 * average, seconds); --csv FILE also writes every pair's tau.
 * docs/coupling_times.md has the measurements and the commands.
 */
#include <ebm.h>

#include "common/bas.h"
#include "common/cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "meeting_times"

static const char *const COUPLING_NAMES[] = {"maximal", "crn", "blockwise"};
enum { N_COUPLINGS = 3 };

typedef struct options {
    const char *model, *couplings, *csv;
    int start; /* 0 data (BAS 4x4), 1 noise */
    int64_t chains, batches, cap;
    uint64_t seed;
    int use[N_COUPLINGS];
} options;

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* x_0 of batch b: visible rows from the data (or noise), hidden layers by
 * one sweep of the sampler clamped at the visible layer. */
static void start_states(ebm_model_t *m, const options *o, const float *data, int64_t n_data,
                         int64_t nv, ebm_rng_t *rng, float *x)
{
    const int64_t n = o->chains, w = ebm_model_state_width(m);
    int rc = ebm_model_random_state(m, rng, n, x, w, NULL, 0);
    if (rc != EBM_OK) {
        cli_die(PROG, "ebm_model_random_state", rc, ebm_model_errmsg(m));
    }
    if (o->start == 1) {
        return;
    }
    ebm_sampler_t *clamped;
    if ((rc = ebm_sampler_create(&clamped, m, EBM_SAMPLER_GIBBS)) != EBM_OK ||
        (rc = ebm_sampler_set_int(clamped, EBM_SAMPLER_CLAMP_LAYERS, 1)) != EBM_OK) {
        cli_die(PROG, "sampler for p(h | v)", rc, ebm_model_errmsg(m));
    }
    for (int64_t r = 0; r < n; r++) {
        memcpy(x + r * w, data + (r % n_data) * nv, (size_t)nv * sizeof *x);
        memset(x + r * w + nv, 0, (size_t)(w - nv) * sizeof *x);
    }
    if ((rc = ebm_sampler_step(clamped, rng, n, x, w)) != EBM_OK) {
        cli_die(PROG, "ebm_sampler_step", rc, ebm_sampler_errmsg(clamped));
    }
    ebm_sampler_destroy(clamped);
}

/* The coupled chains of one batch from x (x_1) and y (x_0) until every row
 * has met or reached the cap: tau[0..chains), *steps the row-steps made. */
static void run_batch(ebm_sampler_t *s, ebm_rng_t *rng, const options *o, int64_t w, float *x,
                      float *y, uint8_t *met, int64_t *tau, double *steps)
{
    int64_t n = o->chains;
    int64_t *row = cli_xmalloc(PROG, (size_t)n * sizeof *row);
    int64_t left = 0;
    for (int64_t r = 0; r < n; r++) {
        if (memcmp(x + r * w, y + r * w, (size_t)w * sizeof *x) == 0) {
            tau[r] = 1;
        } else { /* pack the unmet rows at the front */
            memmove(x + left * w, x + r * w, (size_t)w * sizeof *x);
            memmove(y + left * w, y + r * w, (size_t)w * sizeof *y);
            row[left++] = r;
        }
    }
    for (int64_t t = 2; left > 0; t++) {
        if (t > o->cap) {
            for (int64_t i = 0; i < left; i++) {
                tau[row[i]] = -o->cap; /* capped */
            }
            break;
        }
        int rc = ebm_sampler_coupled_step(s, rng, left, x, w, y, w, met);
        if (rc != EBM_OK) {
            cli_die(PROG, "ebm_sampler_coupled_step", rc, ebm_sampler_errmsg(s));
        }
        *steps += (double)left;
        int64_t k = 0;
        for (int64_t i = 0; i < left; i++) {
            if (met[i]) {
                tau[row[i]] = t;
                continue;
            }
            if (k != i) {
                memcpy(x + k * w, x + i * w, (size_t)w * sizeof *x);
                memcpy(y + k * w, y + i * w, (size_t)w * sizeof *y);
                row[k] = row[i];
            }
            k++;
        }
        left = k;
    }
    free(row);
}

static int parse_options(int argc, char **argv, options *o)
{
    static const char *const starts[] = {"data", "noise"};
    o->couplings = "crn,blockwise";
    o->chains = 1000;
    o->batches = 20;
    o->cap = 1000000;
    o->seed = 1;
    const cli_spec specs[] = {
        CLI_STR("--model", "FILE", &o->model, "the model (ebm_model_save); required"),
        CLI_ONE_OF("--start", &o->start, starts, 0,
                   "visible rows from 4x4 bars-and-stripes (16 visible units), or every layer "
                   "from uniform noise"),
        CLI_STR("--couplings", "LIST", &o->couplings, "from maximal, crn, blockwise"),
        CLI_I64("--chains", "N", &o->chains, 1, 1 << 24, "chain pairs per batch"),
        CLI_I64("--batches", "N", &o->batches, 1, 1 << 20, "batches per coupling"),
        CLI_I64("--cap", "N", &o->cap, 2, INT64_C(1) << 40, "most steps tau per pair"),
        {.type = CLI_SEED, .name = "--seed", .meta = "N", .field = &o->seed,
         .help = "seed of the starts and the chains"},
        CLI_STR("--csv", "FILE", &o->csv, "also write every pair's tau (coupling,batch,row,tau)"),
    };
    const cli_program p = {PROG, "--model FILE [options]", NULL, specs,
                           (int)(sizeof specs / sizeof specs[0]), NULL, NULL, NULL};
    const int parsed = cli_parse(&p, argc, argv);
    if (parsed != 0) {
        return parsed;
    }
    if (o->model == NULL) {
        fprintf(stderr, PROG ": --model is required (--help lists the options)\n");
        return -1;
    }
    char bad[64];
    if (cli_parse_names(o->couplings, COUPLING_NAMES, N_COUPLINGS, o->use, bad, sizeof bad) <= 0) {
        fprintf(stderr, PROG ": bad --couplings entry '%s' (maximal, crn or blockwise)\n", bad);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    options o = {0};
    const int parsed = parse_options(argc, argv, &o);
    if (parsed != 0) {
        return parsed > 0 ? 0 : 2;
    }
    ebm_model_t *m;
    char err[256];
    int rc = ebm_model_load(&m, o.model, err, sizeof err);
    if (rc != EBM_OK) {
        cli_die(PROG, "ebm_model_load", rc, err);
    }
    const int64_t w = ebm_model_state_width(m), nv = ebm_model_layer_size(m, 0);
    float data[32 * 16];
    if (o.start == 0) {
        if (nv != 16 || ebm_model_layer_units(m, 0) != EBM_UNITS_BINARY) {
            fprintf(stderr, PROG ": --start data takes 4x4 bars-and-stripes: the model needs 16 "
                            "binary visible units\n");
            return 2;
        }
        bas_generate(4, data, 16);
    }
    const int64_t n = o.chains, total = o.chains * o.batches;
    float *x0 = cli_xmalloc(PROG, (size_t)(n * w) * sizeof *x0);
    float *x1 = cli_xmalloc(PROG, (size_t)(n * w) * sizeof *x1);
    float *x = cli_xmalloc(PROG, (size_t)(n * w) * sizeof *x);
    float *y = cli_xmalloc(PROG, (size_t)(n * w) * sizeof *y);
    uint8_t *met = cli_xmalloc(PROG, (size_t)n);
    int64_t *tau[N_COUPLINGS] = {0};
    double steps[N_COUPLINGS] = {0}, seconds[N_COUPLINGS] = {0};
    ebm_sampler_t *gibbs;
    if ((rc = ebm_sampler_create(&gibbs, m, EBM_SAMPLER_GIBBS)) != EBM_OK) {
        cli_die(PROG, "ebm_sampler_create", rc, ebm_model_errmsg(m));
    }
    for (int k = 0; k < N_COUPLINGS; k++) {
        tau[k] = o.use[k] ? cli_xmalloc(PROG, (size_t)total * sizeof **tau) : NULL;
    }
    for (int64_t b = 0; b < o.batches; b++) {
        ebm_rng_t *rng;
        if ((rc = ebm_rng_create(&rng, o.seed, (uint64_t)b)) != EBM_OK) {
            cli_die(PROG, "ebm_rng_create", rc, "");
        }
        start_states(m, &o, data, 32, nv, rng, x0);
        memcpy(x1, x0, (size_t)(n * w) * sizeof *x0);
        if ((rc = ebm_sampler_step(gibbs, rng, n, x1, w)) != EBM_OK) {
            cli_die(PROG, "ebm_sampler_step", rc, ebm_sampler_errmsg(gibbs));
        }
        ebm_rng_destroy(rng);
        for (int k = 0; k < N_COUPLINGS; k++) {
            if (!o.use[k]) {
                continue;
            }
            ebm_sampler_t *s;
            if ((rc = ebm_sampler_create(&s, m, EBM_SAMPLER_GIBBS)) != EBM_OK ||
                (rc = ebm_sampler_set_int(s, EBM_SAMPLER_COUPLING, k)) != EBM_OK ||
                (rc = ebm_rng_create(&rng, o.seed, (UINT64_C(1) << 32) + 64 * (uint64_t)b +
                                                       (uint64_t)k)) != EBM_OK) {
                cli_die(PROG, "coupled sampler", rc, ebm_model_errmsg(m));
            }
            memcpy(x, x1, (size_t)(n * w) * sizeof *x);
            memcpy(y, x0, (size_t)(n * w) * sizeof *y);
            const double t0 = cli_now();
            run_batch(s, rng, &o, w, x, y, met, tau[k] + b * n, &steps[k]);
            seconds[k] += cli_now() - t0;
            ebm_rng_destroy(rng);
            ebm_sampler_destroy(s);
        }
        fprintf(stderr, "\r" PROG ": batch %lld of %lld", (long long)(b + 1),
                (long long)o.batches);
    }
    fprintf(stderr, "\n");
    FILE *csv = NULL;
    if (o.csv != NULL && (csv = fopen(o.csv, "w")) == NULL) {
        perror(o.csv);
        return 1;
    }
    if (csv != NULL) {
        fprintf(csv, "coupling,batch,row,tau,capped\n");
    }
    printf("%s, %lld pairs (%lld x %lld), start %s, cap %lld\n", o.model, (long long)total,
           (long long)o.batches, (long long)n, o.start == 0 ? "data" : "noise", (long long)o.cap);
    printf("%-10s %16s %7s %7s %8s %9s %7s %12s %9s\n", "coupling", "mean tau (s.e.)", "median",
           "p99", "p99.9", "max", "capped", "steps/pair", "seconds");
    for (int k = 0; k < N_COUPLINGS; k++) {
        if (!o.use[k]) {
            continue;
        }
        int64_t *t = tau[k], capped = 0;
        double sum = 0.0, sum2 = 0.0;
        for (int64_t i = 0; i < total; i++) {
            const int was_capped = t[i] < 0;
            capped += was_capped;
            t[i] = was_capped ? -t[i] : t[i];
            if (csv != NULL) {
                fprintf(csv, "%s,%lld,%lld,%lld,%d\n", COUPLING_NAMES[k], (long long)(i / n),
                        (long long)(i % n), (long long)t[i], was_capped);
            }
            sum += (double)t[i];
            sum2 += (double)t[i] * (double)t[i];
        }
        const double mean = sum / (double)total;
        const double se = sqrt(fmax(0.0, sum2 / (double)total - mean * mean) / (double)total);
        qsort(t, (size_t)total, sizeof *t, cmp_i64);
        char ms[32];
        snprintf(ms, sizeof ms, "%s%.2f (%.2f)", capped > 0 ? ">=" : "", mean, se);
        printf("%-10s %16s %7lld %7lld %8lld %9lld %7lld %12.2f %9.2f\n", COUPLING_NAMES[k], ms,
               (long long)t[total / 2], (long long)t[(int64_t)(0.99 * (double)total)],
               (long long)t[(int64_t)(0.999 * (double)total)], (long long)t[total - 1],
               (long long)capped, steps[k] / (double)total, seconds[k]);
        free(t);
    }
    if (csv != NULL && fclose(csv) != 0) {
        perror(o.csv);
        return 1;
    }
    free(x0);
    free(x1);
    free(x);
    free(y);
    free(met);
    ebm_sampler_destroy(gibbs);
    ebm_model_destroy(m);
    return 0;
}
