/* The shared training loop of the DBM/RBM trainers (trainer.h): its
 * messages, the distributed agreement on failures and on the starting
 * point, and trainer_main, which runs the steps of the other trainer_*.c
 * files in order (trainer_run.h lists them). */
#include "trainer_run.h"

#include "cli.h"
#include "dist.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The last message of trainer_complain, for the other ranks of a distributed run. */
static char last_complaint[ERR_SIZE];

int trainer_complain(const trainer_config *c, const char *fmt, ...)
{
    va_list ap, copy;
    va_start(ap, fmt);
    va_copy(copy, ap);
    vsnprintf(last_complaint, sizeof last_complaint, fmt, copy);
    va_end(copy);
    if (c->comm != NULL) {
        fprintf(stderr, "%s: rank %d: ", c->prog, c->comm->rank);
    } else {
        fprintf(stderr, "%s: ", c->prog);
    }
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

/* Distributed: whether any rank failed (each says so by `failed`, after
 * trainer_complain); the others then say which rank and why. Alone: `failed`. */
int trainer_any_failed(const trainer_config *c, int failed)
{
    if (c->comm == NULL) {
        return failed;
    }
    char msg[ERR_SIZE];
    snprintf(msg, sizeof msg, "%s", failed ? last_complaint : "");
    const int who = dist_agree(c->comm, failed, msg, sizeof msg);
    if (who >= 0 && !failed) {
        fprintf(stderr, "%s: rank %d: stopping: rank %d failed: %s\n", c->prog, c->comm->rank,
                who, msg);
    }
    return who >= 0;
}

/* FNV-1a over n bytes, continuing from h. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * UINT64_C(0x100000001b3);
    }
    return h;
}

/* Distributed: every rank must start from rank 0's training data, model,
 * generator and step (each reads its own files: a stale copy on one machine
 * would train on another batch, silently). 0, or 1 after a message. */
static int same_start_as_root(run *r)
{
    const dist_comm *cm = r->c->comm;
    float *theta = malloc((size_t)r->n_params * sizeof *theta);
    if (theta == NULL) {
        return trainer_complain(r->c, "out of memory");
    }
    uint64_t state[EBM_RNG_STATE_WORDS];
    ebm_model_get_params(r->m, theta);
    ebm_rng_get_state(r->rng, state);
    uint64_t h = fnv1a(UINT64_C(0xcbf29ce484222325), r->train.x,
                       (size_t)(r->train.n * r->train.dim) * sizeof *r->train.x);
    h = fnv1a(h, theta, (size_t)r->n_params * sizeof *theta);
    h = fnv1a(h, state, sizeof state);
    h = fnv1a(h, &r->step, sizeof r->step);
    free(theta);
    uint64_t root = h;
    if (cm->bcast(cm->ctx, &root, sizeof root, 0) != 0) {
        return trainer_complain(r->c, "the transport failed");
    }
    if (root != h) {
        return trainer_complain(r->c, "its training data, model, generator or step differ from "
                                      "rank 0's: give every rank the same data and --resume "
                                      "checkpoint");
    }
    return 0;
}

const char *trainer_method_flag(int method)
{
    return method == EBM_ESTIMATOR_UCD_LMI ? "ucd-lmi"
           : method == EBM_ESTIMATOR_UCD   ? "ucd"
           : method == EBM_ESTIMATOR_CD    ? "cd"
           : method == EBM_ESTIMATOR_PT    ? "pt"
                                           : "pcd";
}

/* PCD's persistent chains: plain or tempered. */
int trainer_persistent(int method)
{
    return method == EBM_ESTIMATOR_PCD || method == EBM_ESTIMATOR_PT;
}

static void free_run(run *r)
{
    if (r->csv != NULL) {
        fclose(r->csv);
    }
    ebm_estimator_destroy(r->e);
    dist_free(&r->dist);
    ebm_model_destroy(r->m);
    ebm_model_destroy(r->m_avg);
    ebm_rng_destroy(r->rng);
    optim_free(&r->opt);
    optim_average_free(&r->avg);
    free(r->batch);
    free(r->grad);
    free(r->rows);
    free(r->heldout_x);
    free(r->ais_base);
    free(r->centre_mu);
    free(r->centre_target);
    free(r->centre_clamp);
    free(r->proposal);
    data_set_free(&r->train);
    data_set_free(&r->test);
}

/* Parse the options (distributed: every rank parses; if one asked for
 * --help or failed, all stop). @return 0 to go on, 1 after --help, 2 for a
 * bad option, -1 after a transport failure (and a message) */
static int take_options(trainer_config *c, int argc, char **argv)
{
    int rc = trainer_parse_options(c, argc, argv);
    if (c->comm != NULL) {
        double worst = rc;
        if (c->comm->max_f64(c->comm->ctx, &worst, 1) != 0) {
            trainer_complain(c, "the transport failed");
            return -1;
        }
        rc = (int)worst;
    }
    return rc == 0 || rc == 1 ? rc : 2;
}

/* Everything before the first step: the output directory, the data, the
 * model, the estimator and the evaluation's preparations, the settings text,
 * --resume and train.csv. Distributed, every rank sets up alike (its own
 * data, model, shards), all stop if one fails (a missing data file on one
 * machine), and they check that they start alike; only rank 0 writes, so
 * only it makes the output directory. */
static int set_up(run *r)
{
    trainer_config *c = r->c;
    int rc = r->root && cli_make_dirs(c->out) != 0
                 ? trainer_complain(c, "cannot create %s: %s", c->out, strerror(errno))
                 : 0;
    rc = trainer_any_failed(c, rc || trainer_load_data(r) || trainer_build_model(r) ||
                                   trainer_centre_start(r) || trainer_build_estimator(r) ||
                                   trainer_prepare_heldout(r) || trainer_prepare_ais_base(r));
    if (rc == 0) {
        rc = trainer_any_failed(c, trainer_config_text(r, r->config_text,
                                                       sizeof r->config_text) ||
                                       (c->resume != NULL && trainer_resume(r)) ||
                                       (r->root && trainer_open_csv(r)));
    }
    if (rc == 0 && c->comm != NULL) {
        rc = trainer_any_failed(c, same_start_as_root(r));
    }
    return rc;
}

/* What the run trains, and how --eval-every and --average-from apply, on
 * stderr (rank 0). */
static void announce(const run *r)
{
    const trainer_config *c = r->c;
    fprintf(stderr, "%s: %s, layers", c->prog, c->title);
    for (int l = 0; l < c->n_layers; l++) {
        fprintf(stderr, "%s%lld", l ? "-" : " ", (long long)c->layers[l]);
    }
    fprintf(stderr, " (%lld parameters), %lld training images, batch %lld, lr %g\n",
            (long long)r->n_params, (long long)r->train.n, (long long)c->batch, c->lr);
    if (r->heldout_column != NULL) {
        fprintf(stderr, "%s: --eval-every %lld: %s%s on %lld test images%s\n", c->prog,
                (long long)c->eval_every, r->heldout_column,
                r->heldout_is ? " and heldout_loglik_is (--is-samples per image)" : "",
                (long long)r->heldout_n,
                r->heldout_exact ? "" : " (AIS with --ais-chains x --eval-betas)");
    }
    if (optim_average_on(&r->avg)) {
        fprintf(stderr, "%s: --average-from %lld: the average of the iterates after step "
                "%lld is evaluated and saved as model.ebm, the last iterate as "
                "model_raw.ebm\n", c->prog, (long long)c->average_from,
                (long long)c->average_from);
    }
}

/* After training (rank 0), rc its outcome so far: model.ebm (and
 * model_raw.ebm); after a signal, where to resume; else the pictures, the
 * final evaluation and the report, unless a signal comes first.
 * @return the exit status */
static int finish(run *r, int rc, double train_s)
{
    const trainer_config *c = r->c;
    rc = rc || trainer_save_models(r);
    char path[4200], raw[4300] = "";
    if (optim_average_on(&r->avg) && r->avg.count > 0) {
        snprintf(raw, sizeof raw, " (the average of %lld iterates; the last iterate: "
                 "%s/model_raw.ebm)", (long long)r->avg.count, c->out);
    } else if (optim_average_on(&r->avg)) {
        snprintf(raw, sizeof raw, " (the last iterate, also in %s/model_raw.ebm)", c->out);
    }
    if (rc == 0 && r->stopped_by != 0) {
        fprintf(stderr, "%s: %s: stopped after step %lld; wrote %s/checkpoint.ckpt and "
                        "%s/model.ebm%s; continue with --resume %s/checkpoint.ckpt\n",
                c->prog, cli_signal_name(r->stopped_by), (long long)r->step, c->out, c->out,
                raw, c->out);
        return 128 + r->stopped_by;
    }
    double accept = NAN, sweeps = NAN, pictures_s = 0.0;
    const ebm_model_t *shown = rc == 0 ? trainer_shown_model(r) : NULL;
    rc = rc || shown == NULL;
    if (rc == 0) {
        const double t = cli_now();
        snprintf(path, sizeof path, "%s/samples.png", c->out);
        rc = trainer_write_samples(r, shown, path, r->step, &accept, &sweeps);
        snprintf(path, sizeof path, "%s/completion.png", c->out);
        rc = rc || trainer_write_completions(r, shown, path);
        pictures_s = cli_now() - t;
    }
    result res;
    if (rc == 0 && cli_stop_signal() == 0) {
        fprintf(stderr, "%s: evaluating %son %lld test images...\n", c->prog,
                shown != r->m ? "the average of the iterates " : "", (long long)r->test.n);
        rc = trainer_evaluate(r, shown, &res);
    }
    if (rc == 0 && cli_stop_signal() == 0) {
        trainer_report(r, &res, train_s, pictures_s, accept, sweeps);
    }
    if (cli_stop_signal() != 0) {
        /* The signal came after the last step: the outputs of training are whole. */
        fprintf(stderr, "%s: %s after training (step %lld); %s/checkpoint.ckpt and "
                        "%s/model.ebm are complete%s\n", c->prog,
                cli_signal_name(cli_stop_signal()), (long long)r->step, c->out, c->out,
                rc == 0 ? "; the final evaluation was skipped or cut short" : "");
        return 128 + cli_stop_signal();
    }
    return rc == 0 ? 0 : 1;
}

int trainer_main(trainer_config *c, int argc, char **argv)
{
    int rc = take_options(c, argc, argv);
    if (rc != 0) {
        return rc == 1 ? 0 : rc == 2 ? 2 : 1;
    }
    char out_default[256];
    if (c->out == NULL) {
        snprintf(out_default, sizeof out_default, "examples/out/%s",
                 trainer_method_flag(c->method));
        c->out = out_default;
    }
    run r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.root = c->comm == NULL || c->comm->rank == 0;
    rc = set_up(&r);
    double train_s = 0.0;
    if (rc == 0 && r.root) {
        announce(&r);
    }
    if (rc == 0) {
        if (cli_catch_stop_signals() != 0) {
            fprintf(stderr, "%s: warning: cannot catch SIGINT and SIGTERM: %s\n", c->prog,
                    strerror(errno));
        }
        rc = trainer_train(&r, &train_s);
    }
    if (rc == 0) {
        rc = trainer_save_checkpoint(&r, train_s);
    }
    double st[4];
    if (r.root && trainer_stragglers(&r, st)) {
        fprintf(stderr, "%s: %d ranks, %lld shards: per step the slowest rank computed %.1f ms, "
                "the fastest %.1f ms; the busiest rank's rows made %.1f coupled steps, the "
                "mean rank's %.1f\n", c->prog, c->comm->size, (long long)r.dist.n_shards, st[0],
                st[1], st[2], st[3]);
    }
    if (!r.root) { /* the rest is rank 0's: the model, the pictures, the evaluation */
        free_run(&r);
        return rc != 0 ? 1 : r.stopped_by != 0 ? 128 + r.stopped_by : 0;
    }
    rc = finish(&r, rc, train_s);
    free_run(&r);
    return rc;
}
