/* The training loop (trainer_run.h): a step draws a batch, moves the
 * centring offsets, takes the estimator's gradient (or the shards'), updates
 * the model and the average of the iterates; around it, --eval-every's
 * held-out evaluation, the lines of train.csv and the progress lines, the
 * sample pictures and the checkpoints, and the model files. */
#include "trainer_run.h"

#include "checkpoint.h"
#include "cli.h"
#include "data.h"
#include "dist.h"
#include "optim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The model evaluated, drawn and saved as model.ebm: once the average of
 * the iterates holds one (--average-from), m_avg set to it; else the last
 * iterate. NULL after a message if the average cannot be set. */
const ebm_model_t *trainer_shown_model(run *r)
{
    if (r->avg.count == 0) {
        return r->m;
    }
    const int rc = optim_average_apply(&r->avg, r->m_avg);
    if (rc != EBM_OK) {
        trainer_complain(r->c, "--average-from: the average: %s (%s)", ebm_error_name(rc),
                         ebm_model_errmsg(r->m_avg));
        return NULL;
    }
    return r->m_avg;
}

/* model.ebm (trainer_shown_model) and, with --average-from, model_raw.ebm: the last
 * iterate. */
int trainer_save_models(run *r)
{
    char err[ERR_SIZE + 4200];
    const ebm_model_t *m = trainer_shown_model(r);
    if (m == NULL) {
        return 1;
    }
    if (checkpoint_save_models(r->c->out, m, optim_average_on(&r->avg) ? r->m : NULL, err,
                               sizeof err) != CHECKPOINT_OK) {
        return trainer_complain(r->c, "%s", err);
    }
    return 0;
}

/* Distributed, every rank calls it: the shards' chains are gathered into
 * r->e first, and rank 0 writes. */
int trainer_save_checkpoint(run *r, double seconds)
{
    char path[4200], err[ERR_SIZE] = "";
    if (r->c->comm != NULL && dist_gather_chains(&r->dist, r->e, err, sizeof err) != 0) {
        return trainer_complain(r->c, "checkpoint: %s", err);
    }
    if (!r->root) {
        return 0;
    }
    snprintf(path, sizeof path, "%s/checkpoint.ckpt", r->c->out);
    const int rc = checkpoint_save(path, r->m, r->rng, &r->opt, &r->avg, r->e, r->step, seconds,
                                   r->config_text, err, sizeof err);
    return rc == CHECKPOINT_OK ? 0 : trainer_complain(r->c, "checkpoint: %s", err);
}

/* train.csv: appended to when resuming (an existing file must have the
 * same columns; rows after the checkpoint's step are cut), else written
 * anew. The held-out columns come last, and those of the average after
 * them, so the others keep their places with or without --eval-every and
 * --average-from. */
int trainer_open_csv(run *r)
{
    char path[4200], header[1024], averaged[256] = "", err[ERR_SIZE];
    snprintf(path, sizeof path, "%s/train.csv", r->c->out);
    const char *is = r->heldout_is ? ",heldout_loglik_is" : "";
    if (r->heldout_column != NULL && optim_average_on(&r->avg)) {
        snprintf(averaged, sizeof averaged, ",%s_avg,heldout_log_z_avg,heldout_seconds_avg%s",
                 r->heldout_column, r->heldout_is ? ",heldout_loglik_is_avg" : "");
    }
    snprintf(header, sizeof header,
             "step,seconds,lr,grad_norm,tau_mean,tau_max,positive_tau_mean,positive_tau_max,"
             "capped,sweeps_mean,search_capped,accept_rate,mean_field_missed%s%s%s%s%s%s\n",
             r->c->method == EBM_ESTIMATOR_PT ? ",swap_rate" : "",
             r->heldout_column != NULL ? "," : "",
             r->heldout_column != NULL ? r->heldout_column : "",
             r->heldout_column != NULL ? ",heldout_log_z,heldout_seconds" : "", is, averaged);
    if (cli_open_log(&r->csv, path, header, r->c->resume != NULL ? r->step : -1,
                     " (another --eval-every, --average-from or --is-samples?)", err,
                     sizeof err) != 0) {
        return trainer_complain(r->c, "%s", err);
    }
    return 0;
}

/* Statistics averaged between two progress lines. */
typedef struct window {
    int64_t steps;
    double tau, tau_max, ptau, sweeps, accept, capped, mf_missed, swap;
} window;

/* PT: add the last step's exchanges, pair by pair. */
static void record_swaps(run *r)
{
    int64_t acc[TRAINER_MAX_BETAS], prop[TRAINER_MAX_BETAS];
    const int pairs = r->c->n_ladder - 1;
    if (r->c->comm != NULL) { /* all shards' (dist_gradient) */
        memcpy(acc, r->dist.swap_accepted, (size_t)pairs * sizeof *acc);
        memcpy(prop, r->dist.swap_proposed, (size_t)pairs * sizeof *prop);
    } else if (ebm_estimator_swap_counts(r->e, pairs, acc, prop) != EBM_OK) {
        return;
    }
    for (int k = 0; k < pairs; k++) {
        r->swap_accepted[k] += (double)acc[k];
        r->swap_proposed[k] += (double)prop[k];
    }
}

static double stat(const run *r, int s)
{
    return r->c->comm != NULL ? r->dist.stat[s] : ebm_estimator_stat(r->e, s);
}

static void progress(const run *r, const window *w, double seconds, int64_t steps_here,
                     double seconds_here)
{
    const trainer_config *c = r->c;
    char eta[32] = "?", stats[256] = "";
    const double rate = seconds_here > 0 ? (double)steps_here / seconds_here : NAN;
    double left = INFINITY;
    if (c->steps > 0) {
        left = (double)(c->steps - r->step) / rate;
    }
    if (c->minutes > 0 && c->minutes * 60.0 - seconds < left) {
        left = c->minutes * 60.0 - seconds;
    }
    cli_format_duration(left < 0 ? 0 : left, eta, sizeof eta);
    const double n = w->steps > 0 ? (double)w->steps : 1.0;
    if (c->method == EBM_ESTIMATOR_PT) {
        snprintf(stats, sizeof stats, "swap rate %.3f  mean-field rows missed %.1f",
                 w->swap / n, w->mf_missed / n);
    } else if (c->method == EBM_ESTIMATOR_PCD) {
        snprintf(stats, sizeof stats, "mean-field rows missed %.1f", w->mf_missed / n);
    } else {
        snprintf(stats, sizeof stats,
                 "tau %.2f (max %.0f, positive %.2f)  sweeps %.1f  accept %.3f%s",
                 w->tau / n, w->tau_max, w->ptau / n, w->sweeps / n, w->accept / n,
                 w->capped > 0 ? "  CAPPED" : "");
    }
    char total[32];
    if (c->steps > 0) {
        snprintf(total, sizeof total, "%lld", (long long)c->steps);
    } else {
        snprintf(total, sizeof total, "-");
    }
    fprintf(stderr, "%s step %lld/%s  %.2f steps/s  ETA %s  %s  |g| %.3g  lr %.3g\n",
            trainer_method_flag(c->method), (long long)r->step, total, rate, eta, stats,
            r->opt.last_norm, optim_rate(&r->opt));
}

/* After a failure in training (the message is out): alone, 1: stop;
 * distributed, 0: carry on to the next step's agreement, which stops every
 * rank with this one's message. */
static int rank_failed(run *r)
{
    if (r->c->comm == NULL) {
        return 1;
    }
    r->failed = 1;
    return 0;
}

/* Whether training ends before the next step, at seconds of training:
 * --steps or --minutes reached (*stop 1), or SIGINT or SIGTERM
 * (cli_catch_stop_signals; r->stopped_by, *stop 1), the caller writing the
 * checkpoint and the model. Distributed, a rank that failed in the last
 * step stops all, then rank 0's clock decides and any rank's signal stops
 * all. @return 0, or 1 after a message */
static int stop_before_step(run *r, double seconds, int *stop)
{
    const trainer_config *c = r->c;
    int done = (c->steps > 0 && r->step >= c->steps) ||
               (c->minutes > 0 && seconds >= c->minutes * 60.0);
    int sig = cli_stop_signal();
    if (c->comm != NULL) {
        if (trainer_any_failed(c, r->failed)) {
            return 1;
        }
        double v[2] = {r->root ? done : 0, sig};
        if (c->comm->max_f64(c->comm->ctx, v, 2) != 0) {
            return trainer_complain(c, "step %lld: the transport failed", (long long)r->step + 1);
        }
        done = v[0] != 0.0;
        sig = (int)v[1];
    }
    *stop = done || (r->stopped_by = sig) != 0;
    return 0;
}

/* The step's gradient into r->grad: a batch of rows drawn with replacement,
 * the centring offsets moved (--centre data), and the estimator's estimate
 * (distributed: the shards', every rank failing together with the failing
 * rank's message). */
static int step_gradient(run *r)
{
    const trainer_config *c = r->c;
    char err[ERR_SIZE] = "";
    int rc = data_draw_rows(r->rows, c->batch, r->train.n, r->rng);
    if (rc == DATA_OK) {
        rc = data_batch(&r->train, &r->enc, r->rng, r->rows, c->batch, r->batch, r->dim, err,
                        sizeof err);
    }
    if (rc != DATA_OK) {
        trainer_complain(c, "batch: %s %s", data_strerror(rc), err);
        if (c->comm == NULL) {
            return 1;
        }
    }
    if (rc == DATA_OK && c->centre && trainer_centre_step(r) != 0) {
        return 1;
    }
    if (c->comm != NULL) {
        if (dist_gradient(&r->dist, r->rng, r->batch, r->dim, r->grad, rc != DATA_OK, err,
                          sizeof err) != 0) {
            return r->root && rc == DATA_OK
                       ? trainer_complain(c, "step %lld: %s", (long long)r->step + 1, err)
                       : 1;
        }
    } else if ((rc = ebm_estimator_gradient(r->e, r->rng, c->batch, r->batch, r->dim,
                                            r->grad)) != EBM_OK) {
        return trainer_complain(c, "step %lld: ebm_estimator_gradient: %s",
                                (long long)r->step + 1, ebm_estimator_errmsg(r->e));
    }
    return 0;
}

/* The update by r->grad and the average of the iterates. @return 0; 1 after
 * a message, with rank_failed's verdict in *stop (1: stop; 0: go on to the
 * next step's agreement). */
static int step_update(run *r, int *stop)
{
    const trainer_config *c = r->c;
    int rc = optim_step(&r->opt, r->m, r->grad);
    if (rc != EBM_OK) {
        trainer_complain(c, "step %lld: update: %s", (long long)r->step + 1,
                         ebm_model_errmsg(r->m));
        *stop = rank_failed(r);
        return 1;
    }
    if ((rc = optim_average_update(&r->avg, r->m, r->opt.step)) != EBM_OK) {
        trainer_complain(c, "step %lld: --average-from: %s", (long long)r->step + 1,
                         ebm_error_name(rc));
        *stop = rank_failed(r);
        return 1;
    }
    return 0;
}

/* The estimator's statistics of the step, into the progress window w and
 * the run's totals (the report's). */
static void record_stats(run *r, window *w)
{
    w->steps++;
    w->tau += stat(r, EBM_ESTIMATOR_STAT_TAU_MEAN);
    w->tau_max = fmax(w->tau_max, stat(r, EBM_ESTIMATOR_STAT_TAU_MAX));
    w->ptau += stat(r, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN);
    w->sweeps += stat(r, EBM_ESTIMATOR_STAT_SWEEPS_MEAN);
    w->accept += stat(r, EBM_ESTIMATOR_STAT_ACCEPT_RATE);
    w->capped += stat(r, EBM_ESTIMATOR_STAT_CAPPED);
    w->mf_missed += stat(r, EBM_ESTIMATOR_STAT_MEAN_FIELD_MISSED);
    if (r->c->method == EBM_ESTIMATOR_PT) {
        w->swap += stat(r, EBM_ESTIMATOR_STAT_SWAP_RATE);
        r->swap_sum += stat(r, EBM_ESTIMATOR_STAT_SWAP_RATE);
        record_swaps(r);
    }
    r->stat_steps++;
    r->tau_sum += stat(r, EBM_ESTIMATOR_STAT_TAU_MEAN);
    r->tau_max = fmax(r->tau_max, stat(r, EBM_ESTIMATOR_STAT_TAU_MAX));
    r->ptau_sum += stat(r, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN);
    r->ptau_max = fmax(r->ptau_max, stat(r, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MAX));
    r->capped += stat(r, EBM_ESTIMATOR_STAT_CAPPED);
    r->mh_accepted += stat(r, EBM_ESTIMATOR_STAT_MH_ACCEPTED);
}

/* One model's held-out figures at a step (NaN where not measured). */
typedef struct heldout_figures {
    double ll, log_z, seconds, is, se;
} heldout_figures;

/* --eval-every at this step: the last iterate's figures into *last and,
 * once the average holds an iterate, the average's into *avg; their time
 * goes to r->heldout_seconds (not training time), and the shown model's
 * log Z is kept for the report's bias check. @return 1 to stop training
 * (rank_failed), else 0. */
static int heldout_at_step(run *r, heldout_figures *last, heldout_figures *avg)
{
    const double te = cli_now();
    if (trainer_heldout_evaluate(r, r->m, r->step, &last->ll, &last->log_z, &last->se,
                                 &last->is) &&
        rank_failed(r)) {
        return 1;
    }
    last->seconds = cli_now() - te;
    if (r->avg.count > 0) {
        const ebm_model_t *m_avg = trainer_shown_model(r);
        if ((m_avg == NULL || trainer_heldout_evaluate(r, m_avg, r->step, &avg->ll, &avg->log_z,
                                                       &avg->se, &avg->is)) &&
            rank_failed(r)) {
            return 1;
        }
        avg->seconds = cli_now() - te - last->seconds;
    }
    r->heldout_seconds += cli_now() - te;
    /* the model the final evaluation sees, for heldout_check */
    r->heldout_last_step = r->step;
    r->heldout_last_log_z = r->avg.count > 0 ? avg->log_z : last->log_z;
    r->heldout_last_se = r->avg.count > 0 ? avg->se : last->se;
    return 0;
}

/* A line of train.csv (open_csv has the columns). */
static void write_csv_line(const run *r, double seconds, double lr, const heldout_figures *last,
                           const heldout_figures *avg)
{
    fprintf(r->csv, "%lld,%.3f,%.6g,%.6g,%.4f,%.0f,%.4f,%.0f,%.0f,%.3f,%.0f,%.5f,%.0f",
            (long long)r->step, seconds, lr, r->opt.last_norm,
            stat(r, EBM_ESTIMATOR_STAT_TAU_MEAN), stat(r, EBM_ESTIMATOR_STAT_TAU_MAX),
            stat(r, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN),
            stat(r, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MAX), stat(r, EBM_ESTIMATOR_STAT_CAPPED),
            stat(r, EBM_ESTIMATOR_STAT_SWEEPS_MEAN), stat(r, EBM_ESTIMATOR_STAT_SEARCH_CAPPED),
            stat(r, EBM_ESTIMATOR_STAT_ACCEPT_RATE),
            stat(r, EBM_ESTIMATOR_STAT_MEAN_FIELD_MISSED));
    if (r->c->method == EBM_ESTIMATOR_PT) {
        fprintf(r->csv, ",%.5f", stat(r, EBM_ESTIMATOR_STAT_SWAP_RATE));
    }
    if (r->heldout_column != NULL) {
        fprintf(r->csv, ",%.6f,%.6f,%.3f", last->ll, last->log_z, last->seconds);
    }
    if (r->heldout_is) {
        fprintf(r->csv, ",%.6f", last->is);
    }
    if (r->heldout_column != NULL && optim_average_on(&r->avg)) {
        fprintf(r->csv, ",%.6f,%.6f,%.3f", avg->ll, avg->log_z, avg->seconds);
        if (r->heldout_is) {
            fprintf(r->csv, ",%.6f", avg->is);
        }
    }
    fputc('\n', r->csv);
    fflush(r->csv);
}

/* The held-out evaluation's line on stderr. */
static void say_heldout(const run *r, const heldout_figures *last, const heldout_figures *avg)
{
    const trainer_config *c = r->c;
    char is[64] = "", averaged[128] = "", avg_is_text[48] = "";
    if (r->heldout_is) {
        snprintf(is, sizeof is, ", IS estimate (K = %lld) %.4f", (long long)c->is_samples,
                 last->is);
        snprintf(avg_is_text, sizeof avg_is_text, ", IS %.4f", avg->is);
    }
    if (r->avg.count > 0) {
        snprintf(averaged, sizeof averaged, "; average of %lld iterates %.4f%s",
                 (long long)r->avg.count, avg->ll, avg_is_text);
    }
    fprintf(stderr, "%s step %lld: held-out %s = %.4f%s (%lld rows, %.2f s)%s\n",
            trainer_method_flag(c->method), (long long)r->step, r->heldout_column, last->ll, is,
            (long long)r->heldout_n, last->seconds, averaged);
}

int trainer_train(run *r, double *seconds_out)
{
    trainer_config *c = r->c;
    char path[4200];
    const double t0 = cli_now();
    const int64_t step0 = r->step;
    double last_print = -INFINITY, seconds = r->seconds_before;
    window w;
    memset(&w, 0, sizeof w);
    for (;;) {
        int stop = 0;
        seconds = r->seconds_before + (cli_now() - t0 - r->heldout_seconds);
        if (stop_before_step(r, seconds, &stop) != 0) {
            return 1;
        }
        if (stop) {
            break;
        }
        if (step_gradient(r) != 0) {
            return 1;
        }
        const double lr = optim_rate(&r->opt);
        if (step_update(r, &stop) != 0) {
            if (stop) {
                return 1;
            }
            continue; /* the next step's agreement stops every rank */
        }
        r->step++;
        record_stats(r, &w);
        seconds = r->seconds_before + (cli_now() - t0 - r->heldout_seconds);
        /* The outputs are rank 0's; a failure there stops every rank at
         * the next step (rank_failed). */
        const int eval_now = r->root && c->eval_every > 0 && r->step % c->eval_every == 0;
        heldout_figures last = {NAN, NAN, NAN, NAN, NAN};
        heldout_figures avg = {NAN, NAN, NAN, NAN, NAN}; /* the average's, once it has one */
        if (eval_now && heldout_at_step(r, &last, &avg) != 0) {
            return 1;
        }
        if (r->root && ((c->log_every > 0 && r->step % c->log_every == 0) || eval_now)) {
            write_csv_line(r, seconds, lr, &last, &avg);
        }
        const double now = cli_now();
        if (eval_now) {
            say_heldout(r, &last, &avg);
        }
        if (r->root && (now - last_print >= 5.0 || r->step - step0 <= 3)) {
            progress(r, &w, seconds, r->step - step0, now - t0 - r->heldout_seconds);
            memset(&w, 0, sizeof w);
            last_print = now;
        }
        if (r->root && c->sample_every > 0 && r->step % c->sample_every == 0) {
            double acc, sw;
            const ebm_model_t *shown = trainer_shown_model(r);
            snprintf(path, sizeof path, "%s/samples.png", c->out);
            if ((shown == NULL || trainer_write_samples(r, shown, path, r->step, &acc, &sw)) &&
                rank_failed(r)) {
                return 1;
            }
        }
        if (c->checkpoint_every > 0 && r->step % c->checkpoint_every == 0 &&
            trainer_save_checkpoint(r, seconds) && rank_failed(r)) {
            return 1;
        }
    }
    *seconds_out = seconds;
    return 0;
}
