/* The trainers' report (trainer_run.h): what a run did and measured, on
 * stdout, in summary.txt (key=value lines) and in table_row.txt (one row
 * of the demo's table), with the verdicts of the AIS bias checks. */
#include "trainer_run.h"

#include "cli.h"
#include "dist.h"
#include "optim.h"

#include <math.h>
#include <stdio.h>

/* A distributed run's stragglers (docs/distributed.md), means per step:
 * the slowest and the fastest rank's compute ms, the busiest rank's and
 * the mean rank's coupled steps; 0 if there is nothing to say. */
int trainer_stragglers(const run *r, double out[4])
{
    const dist_shards *d = &r->dist;
    if (r->c->comm == NULL || d->steps == 0) {
        return 0;
    }
    out[0] = 1e3 * d->slowest_s / (double)d->steps;
    out[1] = 1e3 * d->fastest_s / (double)d->steps;
    out[2] = d->busiest_taus / (double)d->steps;
    out[3] = d->all_taus / (double)d->steps / r->c->comm->size;
    return 1;
}

/* AIS underestimates log Z when it has too few temperatures, and its
 * standard error does not show it; an estimate with more temperatures
 * tells. The verdict on the first from d, the second's log Z less the
 * first's, and se, the two standard errors combined: "agrees" (within
 * AIS_AGREE_NATS, with noise that small), "biased" (the first is lower by
 * more than that and 3 se: its likelihoods are too high), or "unclear"
 * (noise of the size of the difference: more chains would tell). */
#define AIS_AGREE_NATS 1.0
static const char *ais_verdict(double d, double se)
{
    if (fabs(d) <= AIS_AGREE_NATS && se <= AIS_AGREE_NATS) {
        return "agrees";
    }
    return d > AIS_AGREE_NATS && d > 3.0 * se ? "biased" : "unclear";
}

/* --eval-every's bias check (heldout_check): the AIS log Z of its last
 * evaluation, if that was at the final step, against the final
 * evaluation's of the same model (exact, or AIS with more temperatures).
 * Returns the verdict and sets *d (the final's less the held-out's) and
 * *se, or returns "not_shown" and sets *why. */
static const char *heldout_verdict(const run *r, const result *res, double *d, double *se,
                                   const char **why)
{
    const trainer_config *c = r->c;
    const int exact = isfinite(res->exact_log_z);
    *d = *se = NAN;
    if (r->heldout_last_step != r->step || !isfinite(r->heldout_last_log_z)) {
        *why = "no held-out evaluation at the final step (make --steps a multiple of "
               "--eval-every)";
    } else if (!exact && !isfinite(res->log_z)) {
        *why = "the final evaluation has no log Z";
    } else if (!exact && c->ais_betas <= c->eval_betas) {
        *why = "the final AIS has no more temperatures than --eval-betas";
    } else {
        *d = (exact ? res->exact_log_z : res->log_z) - r->heldout_last_log_z;
        *se = exact ? r->heldout_last_se : hypot(r->heldout_last_se, res->log_z_se);
        return ais_verdict(*d, *se);
    }
    return "not_shown";
}

/* The verdicts of the report: the AIS check against the first AIS, and
 * --eval-every's log Z against the final evaluation's. */
typedef struct verdicts {
    double check_d, check_se; /* the check's log Z less the first's, their s.e. */
    const char *verdict;      /* ais_verdict of the check, NULL without one */
    double held_d, held_se;   /* heldout_verdict's figures */
    const char *held;         /* heldout_verdict's, NULL without AIS curves */
    const char *held_why;     /* why the curves' bias is not checked, or NULL */
} verdicts;

static void judge(const run *r, const result *res, verdicts *v)
{
    v->check_d = res->check_log_z - res->log_z;
    v->check_se = hypot(res->log_z_se, res->check_log_z_se);
    v->verdict = isfinite(res->check_log_z) ? ais_verdict(v->check_d, v->check_se) : NULL;
    v->held_d = v->held_se = NAN;
    v->held_why = NULL;
    v->held = r->heldout_column != NULL && !r->heldout_exact
                  ? heldout_verdict(r, res, &v->held_d, &v->held_se, &v->held_why)
                  : NULL;
}

/* What was trained, and how the estimator behaved, on stdout. */
static void print_training(const run *r, double train_s)
{
    const trainer_config *c = r->c;
    char dur[32];
    cli_format_duration(train_s, dur, sizeof dur);
    const int64_t steps_here = r->step;
    printf("\n== %s: %lld steps in %s of training (%.2f steps/s)\n", c->title,
           (long long)steps_here, dur, train_s > 0 ? (double)steps_here / train_s : NAN);
    printf("model: layers");
    for (int l = 0; l < c->n_layers; l++) {
        printf("%s%lld", l ? "-" : " ", (long long)c->layers[l]);
    }
    printf(", %s units%s; data %s (%lld train, %lld test images), %s",
           trainer_units_names[c->units],
           c->hidden == TRAINER_HIDDEN_DRELU ? " over dReLU hidden units" : "",
           trainer_data_names[c->data], (long long)r->train.n, (long long)r->test.n,
           trainer_binarize_names[c->binarize]);
    if (c->binarize == DATA_LEVELS) {
        printf(" (%d)", c->levels);
    }
    printf("\n");
    if (c->method == EBM_ESTIMATOR_PT && r->stat_steps > 0) {
        printf("parallel tempering, %d replicas per chain: swap rate %.4f over %lld steps; per "
               "pair (beta_k, beta_k+1):", c->n_ladder, r->swap_sum / (double)r->stat_steps,
               (long long)r->stat_steps);
        for (int k = 0; k + 1 < c->n_ladder; k++) {
            printf(" %.3f", r->swap_proposed[k] > 0 ? r->swap_accepted[k] / r->swap_proposed[k]
                                                    : NAN);
        }
        printf("\n");
    }
    if (!trainer_persistent(c->method) && r->stat_steps > 0) {
        printf("coupling over %lld steps: tau mean %.3f (max %.0f), positive phase tau mean "
               "%.3f (max %.0f); rows stopped by --cap: %.0f\n", (long long)r->stat_steps,
               r->tau_sum / (double)r->stat_steps, r->tau_max,
               r->ptau_sum / (double)r->stat_steps, r->ptau_max, r->capped);
    }
    if (c->method == EBM_ESTIMATOR_UCD_LMI && r->stat_steps > 0) {
        printf("MH moves accepted over %lld steps: %.0f%s\n", (long long)r->stat_steps,
               r->mh_accepted,
               r->mh_accepted == 0 ? " (so every chain met at once and the gradient applied was "
                                     "f at the local mode plus one Gibbs sweep: docs/samplers.md)"
                                   : "");
    }
    if (optim_average_on(&r->avg) && r->avg.count > 0) {
        printf("evaluated and saved (model.ebm): the average of the %lld iterates after step "
               "%lld (--average-from); the last iterate is model_raw.ebm\n",
               (long long)r->avg.count, (long long)r->avg.from);
    } else if (optim_average_on(&r->avg)) {
        printf("evaluated and saved (model.ebm): the last iterate, since no step came after "
               "--average-from %lld (also model_raw.ebm)\n", (long long)r->avg.from);
    }
}

/* The evaluation's figures and verdicts, and how the samples were drawn, on
 * stdout. */
static void print_evaluation(const run *r, const result *res, const verdicts *v,
                             double pictures_s, double sample_accept, double sample_sweeps)
{
    const trainer_config *c = r->c;
    if (isfinite(res->exact_log_z)) {
        printf("exact:  log Z = %.3f, test log p(v) = %.3f nats/image (%.1f s)\n",
               res->exact_log_z, res->exact_ll_mean, res->exact_s);
    }
    if (isfinite(res->log_z)) {
        char check[96] = "";
        if (v->verdict != NULL) {
            snprintf(check, sizeof check, "; bias check: %s (%+.2f nats at %lldx the betas)",
                     v->verdict, v->check_d, (long long)c->ais_check);
        }
        printf("AIS (%lld chains, %lld betas, from %s%s): log Z = %.3f +- %.3f (%.1f s)%s\n",
               (long long)c->ais_chains, (long long)c->ais_betas,
               r->ais_base != NULL ? "the data's pixel means" : "uniform units",
               r->ais_base_note != NULL ? ", as --ais-base data does not apply" : "",
               res->log_z, res->log_z_se, res->ais_s, check);
        printf("test %s = %.3f nats/image (%.1f s)\n",
               res->is_bound ? "log-likelihood lower bound (mean field)" : "log-likelihood",
               res->ll_mean, res->ll_s);
    }
    if (v->verdict != NULL) {
        printf("AIS check (%lld chains, %lld betas): log Z = %.3f +- %.3f (%.1f s): %+.3f "
               "nats (%.1f s.e.) from the first: %s\n",
               (long long)trainer_check_chains(c), (long long)(c->ais_check * c->ais_betas),
               res->check_log_z, res->check_log_z_se, res->check_s, v->check_d,
               v->check_se > 0 ? v->check_d / v->check_se : 0.0,
               v->verdict[0] == 'a' ? "agrees, within 1 nat"
               : v->verdict[0] == 'b'
                   ? "biased, the first AIS is too low (the likelihoods above too high): "
                     "raise --ais-betas"
                   : "unclear, the difference is within the noise or the check is the "
                     "lower: more --ais-check-chains would tell");
    } else if (isfinite(res->log_z) && c->ais_check == 0) {
        printf("AIS check: none (--ais-check 0), so AIS's bias is not measured\n");
    }
    if (v->held != NULL && v->held_why != NULL) {
        printf("held-out curves (train.csv, AIS with %lld betas): bias not checked: %s\n",
               (long long)c->eval_betas, v->held_why);
    } else if (v->held != NULL) {
        printf("held-out curves (train.csv, AIS with %lld betas): their log Z at step %lld is "
               "%+.3f nats (%.1f s.e.) from the final evaluation's: %s\n",
               (long long)c->eval_betas, (long long)r->step, v->held_d,
               v->held_se > 0 ? v->held_d / v->held_se : 0.0,
               v->held[0] == 'a' ? "agrees, within 1 nat"
               : v->held[0] == 'b' ? "biased, their likelihoods are too high: raise --eval-betas"
                                   : "unclear, the difference is within the noise");
    }
    if (isfinite(res->base_ll_mean)) {
        printf("AIS's base alone (independent %s with the training frequencies): test "
               "log-likelihood = %.3f nats/image\n",
               c->units == TRAINER_POTTS ? "sites" : "units", res->base_ll_mean);
    }
    if (isfinite(res->is_ll_mean)) {
        printf("test log-likelihood, importance-sampled (%lld samples per image, AIS log Z) = "
               "%.3f nats/image (%.1f s)\n",
               (long long)c->is_samples, res->is_ll_mean, res->is_s);
    }
    if (c->n_samples > 0 && !trainer_can_search(c)) {
        printf("samples: %d Gibbs sweeps from uniform states; pictures %.1f s\n",
               GIBBS_SAMPLE_SWEEPS, pictures_s);
    } else if (c->n_samples > 0) {
        printf("samples: local search (%.1f sweeps) + %lld MH steps (acceptance %.4f); "
               "pictures %.1f s\n", sample_sweeps, (long long)c->mh_steps, sample_accept,
               pictures_s);
    }
}

/* summary.txt: the run's figures as key=value lines. */
static void write_summary(const run *r, const result *res, const verdicts *v, double train_s)
{
    const trainer_config *c = r->c;
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.txt", c->out);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        return;
    }
    fprintf(f, "method=%s\nsteps=%lld\ntrain_seconds=%.3f\nais_chains=%lld\nais_betas=%lld\n"
               "ais_log_z=%.6f\nais_log_z_se=%.6f\nais_seconds=%.3f\ntest_ll_mean=%.6f\n"
               "test_ll_is_bound=%d\nll_seconds=%.3f\nexact_log_z=%.6f\nexact_ll_mean=%.6f\n"
               "capped_rows=%.0f\ntau_max=%.0f\npositive_tau_max=%.0f\n",
            c->title, (long long)r->step, train_s, (long long)c->ais_chains,
            (long long)c->ais_betas, res->log_z, res->log_z_se, res->ais_s, res->ll_mean,
            res->is_bound, res->ll_s, res->exact_log_z, res->exact_ll_mean, r->capped, r->tau_max,
            r->ptau_max);
    fprintf(f, "ais_base=%s\n", c->eval == TRAINER_EVAL_NONE ? "none"
                                 : r->ais_base != NULL         ? "data"
                                                               : "uniform");
    if (r->ais_base_note != NULL) {
        fprintf(f, "ais_base_note=--ais-base data does not apply: %s\n", r->ais_base_note);
    }
    if (isfinite(res->base_ll_mean)) {
        fprintf(f, "base_ll_mean=%.6f\n", res->base_ll_mean);
    }
    if (c->centre) {
        fprintf(f, "centre=data\noffset_rate=%.17g\n", c->offset_rate);
    }
    if (c->method == EBM_ESTIMATOR_UCD_LMI) {
        fprintf(f, "mh_accepted=%.0f\n", r->mh_accepted);
    }
    if (c->method == EBM_ESTIMATOR_PT) {
        fprintf(f, "swap_rate=%.6f\n",
                r->stat_steps > 0 ? r->swap_sum / (double)r->stat_steps : NAN);
    }
    if (isfinite(res->is_ll_mean)) {
        fprintf(f, "is_samples=%lld\nis_ll_mean=%.6f\nis_seconds=%.3f\n",
                (long long)c->is_samples, res->is_ll_mean, res->is_s);
    }
    if (isfinite(res->check_log_z)) {
        fprintf(f, "ais_check_chains=%lld\nais_check_betas=%lld\nais_check_log_z=%.6f\n"
                   "ais_check_log_z_se=%.6f\nais_check_seconds=%.3f\n",
                (long long)trainer_check_chains(c), (long long)(c->ais_check * c->ais_betas),
                res->check_log_z, res->check_log_z_se, res->check_s);
        fprintf(f, "ais_check_verdict=%s\n", v->verdict);
    }
    if (v->held != NULL) {
        fprintf(f, "heldout_check=%s\n", v->held);
        if (v->held_why == NULL) {
            fprintf(f, "heldout_check_diff=%.6f\n", v->held_d);
        }
    }
    if (optim_average_on(&r->avg)) {
        /* The figures above are those of the model evaluated: the average or, if
         * no step came after average_from, the last iterate. */
        fprintf(f, "average_from=%lld\naverage_count=%lld\nevaluated=%s\n",
                (long long)r->avg.from, (long long)r->avg.count,
                r->avg.count > 0 ? "averaged" : "last_iterate");
    }
    double st[4];
    if (trainer_stragglers(r, st)) {
        fprintf(f, "ranks=%d\nshards=%lld\nslowest_rank_ms=%.3f\nfastest_rank_ms=%.3f\n"
                   "busiest_rank_taus=%.2f\nmean_rank_taus=%.2f\n",
                c->comm->size, (long long)r->dist.n_shards, st[0], st[1], st[2], st[3]);
    }
    fprintf(f, "config=%s\n", r->config_text);
    fclose(f);
}

/* table_row.txt: one row of the demo's table (Makefile: make demo). */
static void write_table_row(const run *r, const result *res, const verdicts *v, double train_s)
{
    const trainer_config *c = r->c;
    char path[4200], dur[32];
    cli_format_duration(train_s, dur, sizeof dur);
    snprintf(path, sizeof path, "%s/table_row.txt", c->out);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        return;
    }
    char ll[64], is[64] = "-", lz[64], check[64] = "-";
    const double shown = isfinite(res->ll_mean) ? res->ll_mean : res->exact_ll_mean;
    snprintf(ll, sizeof ll, "%.2f", shown);
    if (isfinite(res->is_ll_mean)) {
        snprintf(is, sizeof is, "%.2f", res->is_ll_mean);
    }
    if (isfinite(res->log_z)) {
        snprintf(lz, sizeof lz, "%.2f +- %.2f", res->log_z, res->log_z_se);
    } else {
        snprintf(lz, sizeof lz, "%.2f (exact)", res->exact_log_z);
    }
    if (v->verdict != NULL) {
        snprintf(check, sizeof check, "%s %+.2f", v->verdict, v->check_d);
    }
    fprintf(f, "%-8s %8lld %10s %18s %12s %20s %15s %9.1f s\n", c->title, (long long)r->step,
            dur, ll, is, lz, check,
            res->ais_s + res->ll_s + res->exact_s + res->is_s + res->check_s);
    fclose(f);
}

void trainer_report(const run *r, const result *res, double train_s, double pictures_s,
                    double sample_accept, double sample_sweeps)
{
    verdicts v;
    judge(r, res, &v);
    print_training(r, train_s);
    print_evaluation(r, res, &v, pictures_s, sample_accept, sample_sweeps);
    write_summary(r, res, &v, train_s);
    write_table_row(r, res, &v, train_s);
}
