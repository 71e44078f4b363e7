/*
 * Coupling times of Gibbs and Metropolis-Hastings couplings on random RBMs:
 * Taniguchi et al. (2023), section 5.1 and Figure 1.
 *
 * For each d, one RBM with d visible and d hidden spin units (--layers 3
 * or 4: a DBM of layers of d spin units), W a Haar-random orthogonal matrix
 * (scale 1) and biases from Logistic(0, 0.5), all drawn from --seed. Each method runs --reps independent pairs of chains, one per
 * row of one batch, and counts the steps to an unbiased estimate, tau + T:
 *
 *   x_0 = uniform noise, or (LMI) a local mode reached from uniform noise by
 *         T sweeps of local search (Taniguchi Alg. 1) followed by one Gibbs
 *         step, which T does not count (the paper counts only tau + T);
 *   y_0 = x_0;  x_1 = one step of the method's kernel from x_0;
 *   then coupled steps (x_t, y_{t-1}) -> (x_{t+1}, y_t) until they meet;
 *   tau = min { t >= 1 : x_t == y_{t-1} }  (Jacob et al. 2020; Taniguchi
 *         Alg. 3), so tau = 1 when x_1 == y_0, and tau - 1 coupled steps
 *         were made. T = 0 without LMI.
 *
 * Methods (--methods): gibbs and gibbs-lmi use Qiu et al.'s maximal Gibbs
 * coupling (Alg. 1), the paper's baseline; gibbs-crn and gibbs-crn-lmi the
 * common-random-number variant (Qiu Alg. 3); gibbs-blockwise and
 * gibbs-blockwise-lmi couple both half-steps maximally
 * (EBM_COUPLING_BLOCKWISE); mh and mh-lmi the coupling of
 * MH with a uniform proposal by a common proposal and uniform (Taniguchi
 * Alg. 3); mh-lmi is UCD-LMI's negative phase.
 *
 * A row that has not met after --cap steps of x (tau > cap) stops and is
 * counted as capped; its tau enters the statistics as cap, so a mean with
 * capped rows is a lower bound and is printed as ">= mean". Stepping stops
 * when every row has met or been capped. Met rows leave the batch, so the
 * remaining ones are stepped as one smaller batch.
 *
 * Output: a table on stdout; <out>/coupling_times.csv (one line per d and
 * method), <out>/coupling_times_runs.csv (one line per chain pair) and
 * <out>/coupling_times.png (left: mean tau + T with min-max bands, log
 * scale; right: tau and T of mh-lmi, as the paper's Fig. 1b).
 * docs/coupling_times.md has the results and how they compare with the paper.
 */
#include <ebm.h>

#include "common/cli.h"
#include "common/plot.h"
#include "common/png.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "coupling_times"

typedef struct method {
    const char *name;  /* as in --methods and the CSV */
    const char *label; /* in the plot's legend */
    int kind;          /* EBM_SAMPLER_GIBBS or EBM_SAMPLER_MH_UNIFORM */
    int coupling;      /* enum ebm_coupling, for GIBBS */
    int lmi;           /* start from a local mode (local search + one Gibbs step) */
} method;

/* The index in this table picks the chains' random stream, so the results of
 * a method do not depend on which other methods run. */
enum { MH_LMI = 3 }; /* the method of the right-hand panel */
static const method methods[] = {
    {"gibbs", "Gibbs", EBM_SAMPLER_GIBBS, EBM_COUPLING_MAXIMAL, 0},
    {"gibbs-lmi", "Gibbs + LMI", EBM_SAMPLER_GIBBS, EBM_COUPLING_MAXIMAL, 1},
    {"mh", "MH", EBM_SAMPLER_MH_UNIFORM, 0, 0},
    [MH_LMI] = {"mh-lmi", "MH + LMI (UCD-LMI)", EBM_SAMPLER_MH_UNIFORM, 0, 1},
    {"gibbs-crn", "Gibbs CRN", EBM_SAMPLER_GIBBS, EBM_COUPLING_CRN, 0},
    {"gibbs-crn-lmi", "Gibbs CRN + LMI", EBM_SAMPLER_GIBBS, EBM_COUPLING_CRN, 1},
    {"gibbs-blockwise", "Gibbs BLOCKWISE", EBM_SAMPLER_GIBBS, EBM_COUPLING_BLOCKWISE, 0},
    {"gibbs-blockwise-lmi", "Gibbs BLOCKWISE + LMI", EBM_SAMPLER_GIBBS, EBM_COUPLING_BLOCKWISE, 1},
};
enum { N_METHODS = sizeof methods / sizeof methods[0], MAX_DIMS = 64 };

#define DEFAULT_DIMS "1,2,5,10,25,50,100,150,200"
#define DEFAULT_METHODS "gibbs,gibbs-lmi,mh,mh-lmi,gibbs-crn"
#define DEFAULT_CAP 25000

typedef struct options {
    int64_t dims[MAX_DIMS];
    int n_dims;
    int use[N_METHODS]; /* which methods run */
    int64_t reps, cap, layers;
    uint64_t seed;
    const char *out;
} options;

/* One (d, method): per-row results and their summary. */
typedef struct result {
    int64_t d;
    int di, method; /* indices into options.dims and methods[] */
    int64_t *tau, *T;  /* [reps] */
    uint8_t *capped;   /* [reps]: tau > cap, recorded as cap */
    int64_t n_capped, search_capped;
    double seconds;
    double mean, sd, median, min, max;          /* of tau + T */
    double tau_mean, tau_min, tau_max, T_mean, T_min, T_max;
} result;

/* @return 0, 1 after --help, or -1 after a message */
static int parse_options(int argc, char **argv, options *o)
{
    const char *dims = DEFAULT_DIMS, *list = DEFAULT_METHODS;
    o->reps = 100;
    o->layers = 2;
    o->cap = DEFAULT_CAP;
    o->seed = 1;
    o->out = "examples/out";
    const cli_spec specs[] = {
        CLI_STR("--dims", "LIST", &dims,
                "visible = hidden sizes d, each 1..1048576, at most 64 of them"),
        CLI_I64("--layers", "L", &o->layers, 2, 4,
                "layers of d units each: 2 an RBM, 3 or 4 a DBM (orthogonal W_l)"),
        CLI_I64("--reps", "N", &o->reps, 1, 1 << 20,
                "chain pairs per d and method, rows of one batch"),
        CLI_I64("--cap", "N", &o->cap, 1, INT64_C(1) << 40,
                "most steps tau per pair; slower pairs count as capped"),
        {.type = CLI_SEED, .name = "--seed", .meta = "N", .field = &o->seed,
         .help = "seed of the models and chains"},
        CLI_STR("--methods", "LIST", &list,
                "from gibbs, gibbs-lmi, mh, mh-lmi, gibbs-crn, gibbs-crn-lmi, "
                "gibbs-blockwise, gibbs-blockwise-lmi"),
        CLI_STR("--out", "DIR", &o->out, "output directory, created if missing"),
    };
    const cli_program p = {PROG, "[options]", NULL, specs, (int)(sizeof specs / sizeof specs[0]),
                           NULL, NULL, NULL};
    const int parsed = cli_parse(&p, argc, argv);
    if (parsed != 0) {
        return parsed;
    }
    /* Comma lists, parsed from a copy. */
    char buf[512], *tok, *save = NULL;
    o->n_dims = 0;
    snprintf(buf, sizeof buf, "%s", dims);
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (o->n_dims == MAX_DIMS || cli_parse_int(tok, 1, 1 << 20, &o->dims[o->n_dims]) != 0) {
            fprintf(stderr, "coupling_times: bad --dims entry '%s' (1..2^20, at most %d)\n", tok,
                    MAX_DIMS);
            return -1;
        }
        o->n_dims++;
    }
    memset(o->use, 0, sizeof o->use);
    snprintf(buf, sizeof buf, "%s", list);
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < N_METHODS && strcmp(tok, methods[k].name) != 0) {
            k++;
        }
        if (k == N_METHODS) {
            fprintf(stderr, "coupling_times: unknown method '%s'\n", tok);
            return -1;
        }
        o->use[k] = 1;
    }
    if (o->n_dims == 0) {
        fprintf(stderr, "coupling_times: --dims is empty\n");
        return -1;
    }
    return 0;
}

static int rows_equal(const float *a, const float *b, int64_t w)
{
    return memcmp(a, b, (size_t)w * sizeof *a) == 0;
}

/* Move row `from` of each state matrix to row `to` (both of width w). */
static void move_row(float *x, float *y, int64_t *id, int64_t w, int64_t from, int64_t to)
{
    memcpy(x + to * w, x + from * w, (size_t)w * sizeof *x);
    memcpy(y + to * w, y + from * w, (size_t)w * sizeof *y);
    id[to] = id[from];
}

/* Run method `me` on model m for all rows: fills r->tau, r->T, r->capped. */
static void run_method(ebm_model_t *m, const method *me, const options *o, ebm_rng_t *rng,
                       result *r)
{
    const int64_t n = o->reps, w = ebm_model_state_width(m);
    float *x = malloc((size_t)(n * w) * sizeof *x), *y = malloc((size_t)(n * w) * sizeof *y);
    int64_t *id = malloc((size_t)n * sizeof *id);
    uint8_t *met = malloc((size_t)n);
    ebm_sampler_t *gibbs = NULL, *s = NULL;
    int rc;
    if (x == NULL || y == NULL || id == NULL || met == NULL) {
        cli_die(PROG, "malloc", EBM_ENOMEM, "chain states");
    }
    if ((rc = ebm_sampler_create(&gibbs, m, EBM_SAMPLER_GIBBS)) != EBM_OK ||
        (rc = ebm_sampler_create(&s, m, me->kind)) != EBM_OK) {
        cli_die(PROG, "ebm_sampler_create", rc, ebm_model_errmsg(m));
    }
    if (me->kind == EBM_SAMPLER_GIBBS &&
        (rc = ebm_sampler_set_int(s, EBM_SAMPLER_COUPLING, me->coupling)) != EBM_OK) {
        cli_die(PROG, "ebm_sampler_set_int", rc, ebm_sampler_errmsg(s));
    }
    if ((rc = ebm_model_random_state(m, rng, n, x, w, NULL, 0)) != EBM_OK) {
        cli_die(PROG, "ebm_model_random_state", rc, ebm_model_errmsg(m));
    }
    memset(r->T, 0, (size_t)n * sizeof *r->T);
    r->search_capped = 0;
    if (me->lmi) {
        /* Local mode (Taniguchi Alg. 1), then "a single step of Gibbs sampling
         * from the local mode" (section 3.3). */
        rc = ebm_model_local_search(m, rng, n, x, w, NULL, 0, o->cap, r->T);
        if (rc < 0) {
            cli_die(PROG, "ebm_model_local_search", rc, ebm_model_errmsg(m));
        }
        r->search_capped = rc;
        if ((rc = ebm_sampler_step(gibbs, rng, n, x, w)) != EBM_OK) {
            cli_die(PROG, "ebm_sampler_step", rc, ebm_sampler_errmsg(gibbs));
        }
    }
    memcpy(y, x, (size_t)(n * w) * sizeof *x); /* y_0 = x_0 */
    if ((rc = ebm_sampler_step(s, rng, n, x, w)) != EBM_OK) { /* x_1 */
        cli_die(PROG, "ebm_sampler_step", rc, ebm_sampler_errmsg(s));
    }
    /* Rows with x_1 == y_0 met at tau = 1; the others form the batch. */
    int64_t na = 0;
    for (int64_t i = 0; i < n; i++) {
        r->capped[i] = 0;
        r->tau[i] = 1;
        if (!rows_equal(x + i * w, y + i * w, w)) {
            id[i] = i;
            move_row(x, y, id, w, i, na++);
        }
    }
    double last = cli_now();
    for (int64_t t = 1; na > 0 && t < o->cap; t++) {
        /* (x_t, y_{t-1}) -> (x_{t+1}, y_t); met[i]: x_{t+1} == y_t */
        if ((rc = ebm_sampler_coupled_step(s, rng, na, x, w, y, w, met)) != EBM_OK) {
            cli_die(PROG, "ebm_sampler_coupled_step", rc, ebm_sampler_errmsg(s));
        }
        for (int64_t i = 0; i < na;) {
            if (met[i]) {
                r->tau[id[i]] = t + 1;
                na--;
                move_row(x, y, id, w, na, i);
                met[i] = met[na];
            } else {
                i++;
            }
        }
        if (cli_now() - last > 10.0) {
            last = cli_now();
            fprintf(stderr, "  d=%lld %s: t=%lld, %lld of %lld pairs still apart\n",
                    (long long)r->d, me->name, (long long)t + 1, (long long)na, (long long)n);
        }
    }
    for (int64_t i = 0; i < na; i++) { /* not met by t = cap */
        r->tau[id[i]] = o->cap;
        r->capped[id[i]] = 1;
    }
    r->n_capped = na;
    ebm_sampler_destroy(s);
    ebm_sampler_destroy(gibbs);
    free(met);
    free(id);
    free(y);
    free(x);
}

static int compare_double(const void *a, const void *b)
{
    double u = *(const double *)a, v = *(const double *)b;
    return (u > v) - (u < v);
}

static void summarise(result *r, int64_t n)
{
    double *total = malloc((size_t)n * sizeof *total), sum = 0, sq = 0, st = 0, sT = 0;
    if (total == NULL) {
        cli_die(PROG, "malloc", EBM_ENOMEM, "summary");
    }
    r->tau_min = r->T_min = INFINITY;
    r->tau_max = r->T_max = 0;
    for (int64_t i = 0; i < n; i++) {
        total[i] = (double)(r->tau[i] + r->T[i]);
        sum += total[i];
        st += (double)r->tau[i];
        sT += (double)r->T[i];
        r->tau_min = fmin(r->tau_min, (double)r->tau[i]);
        r->tau_max = fmax(r->tau_max, (double)r->tau[i]);
        r->T_min = fmin(r->T_min, (double)r->T[i]);
        r->T_max = fmax(r->T_max, (double)r->T[i]);
    }
    r->mean = sum / (double)n;
    for (int64_t i = 0; i < n; i++) {
        sq += (total[i] - r->mean) * (total[i] - r->mean);
    }
    r->sd = n > 1 ? sqrt(sq / (double)(n - 1)) : 0.0;
    qsort(total, (size_t)n, sizeof *total, compare_double);
    r->median = n % 2 ? total[n / 2] : 0.5 * (total[n / 2 - 1] + total[n / 2]);
    r->min = total[0];
    r->max = total[n - 1];
    r->tau_mean = st / (double)n;
    r->T_mean = sT / (double)n;
    free(total);
}

static void print_table(const result *res, int n_res, const options *o)
{
    printf("%5s  %-14s %12s %10s %10s %9s %10s %7s %7s %9s\n", "d", "method", "mean tau+T", "sd",
           "median", "max", "mean tau", "mean T", "capped", "seconds");
    for (int k = 0; k < n_res; k++) {
        const result *r = &res[k];
        char mean[32], median[32], max[32];
        /* With capped rows the mean and the max are lower bounds, and so is
         * the median once half the rows are capped; sd is of the capped data. */
        snprintf(mean, sizeof mean, "%s%.2f", r->n_capped ? ">=" : "", r->mean);
        snprintf(median, sizeof median, "%s%.1f", 2 * r->n_capped >= o->reps ? ">=" : "",
                 r->median);
        snprintf(max, sizeof max, "%s%.0f", r->n_capped ? ">=" : "", r->max);
        printf("%5lld  %-14s %12s %10.2f %10s %9s %10.2f %7.2f %7lld %9.2f\n", (long long)r->d,
               methods[r->method].name, mean, r->sd, median, max, r->tau_mean, r->T_mean,
               (long long)r->n_capped, r->seconds);
        if (r->search_capped) {
            printf("       (%lld local searches stopped by the cap of %lld sweeps)\n",
                   (long long)r->search_capped, (long long)o->cap);
        }
    }
}

static FILE *open_out(const options *o, const char *name, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", o->out, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "coupling_times: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    return f;
}

static void close_out(FILE *f, const char *path)
{
    if (ferror(f) | fclose(f)) {
        fprintf(stderr, "coupling_times: error writing %s\n", path);
        exit(1);
    }
}

static void write_csv(const result *res, int n_res, const options *o)
{
    char path[4200];
    FILE *f = open_out(o, "coupling_times.csv", path, sizeof path);
    fprintf(f, "d,method,reps,cap,seed,mean_total,sd_total,median_total,min_total,max_total,"
               "mean_tau,min_tau,max_tau,mean_T,min_T,max_T,capped,search_capped,seconds\n");
    for (int k = 0; k < n_res; k++) {
        const result *r = &res[k];
        fprintf(f, "%lld,%s,%lld,%lld,%llu,%.4f,%.4f,%.1f,%.0f,%.0f,%.4f,%.0f,%.0f,%.4f,%.0f,%.0f,"
                   "%lld,%lld,%.3f\n",
                (long long)r->d, methods[r->method].name, (long long)o->reps, (long long)o->cap,
                (unsigned long long)o->seed, r->mean, r->sd, r->median, r->min, r->max,
                r->tau_mean, r->tau_min, r->tau_max, r->T_mean, r->T_min, r->T_max,
                (long long)r->n_capped, (long long)r->search_capped, r->seconds);
    }
    close_out(f, path);
    f = open_out(o, "coupling_times_runs.csv", path, sizeof path);
    fprintf(f, "d,method,rep,T,tau,capped\n");
    for (int k = 0; k < n_res; k++) {
        for (int64_t i = 0; i < o->reps; i++) {
            fprintf(f, "%lld,%s,%lld,%lld,%lld,%d\n", (long long)res[k].d,
                    methods[res[k].method].name, (long long)i, (long long)res[k].T[i],
                    (long long)res[k].tau[i], res[k].capped[i]);
        }
    }
    close_out(f, path);
}

/* Left: mean tau + T per method, min-max band, log scale (Fig. 1a); hollow
 * markers where some pairs were capped. Right: tau and T of mh-lmi (Fig. 1b). */
static void write_plot(const result *res, int n_res, const options *o)
{
    const int nd = o->n_dims;
    double *buf = calloc((size_t)(N_METHODS + 2) * 4 * (size_t)nd, sizeof *buf);
    uint8_t *open = calloc((size_t)N_METHODS * (size_t)nd, 1);
    plot_series series[N_METHODS], split[2];
    int n_series = 0, have_mh_lmi = 0;
    if (buf == NULL || open == NULL) {
        cli_die(PROG, "calloc", EBM_ENOMEM, "plot");
    }
    for (int k = 0; k < N_METHODS + 2; k++) { /* x, y, lo, hi per series */
        for (int i = 0; i < 4 * nd; i++) {
            buf[(size_t)k * 4 * nd + i] = NAN;
        }
    }
    for (int me = 0; me < N_METHODS; me++) {
        if (!o->use[me]) {
            continue;
        }
        double *x = buf + (size_t)me * 4 * nd, *y = x + nd, *lo = y + nd, *hi = lo + nd;
        for (int k = 0; k < n_res; k++) {
            const result *r = &res[k];
            const int i = r->di;
            if (r->method != me) {
                continue;
            }
            x[i] = (double)r->d;
            y[i] = r->mean;
            lo[i] = r->min;
            hi[i] = r->max;
            open[me * nd + i] = r->n_capped > 0;
            if (me == MH_LMI) { /* tau and T apart */
                double *t = buf + (size_t)N_METHODS * 4 * nd, *T = t + 4 * nd;
                t[i] = T[i] = (double)r->d;
                t[nd + i] = r->tau_mean;
                t[2 * nd + i] = r->tau_min;
                t[3 * nd + i] = r->tau_max;
                T[nd + i] = r->T_mean;
                T[2 * nd + i] = r->T_min;
                T[3 * nd + i] = r->T_max;
                have_mh_lmi = 1;
            }
        }
        series[n_series++] = (plot_series){methods[me].label, nd, x, y, lo, hi, PLOT_BAND,
                                           open + me * nd};
    }
    for (int k = 0; k < 2; k++) {
        double *t = buf + (size_t)(N_METHODS + k) * 4 * nd;
        split[k] = (plot_series){k ? "T (local search sweeps)" : "tau (coupling time)", nd, t,
                                 t + nd, t + 2 * nd, t + 3 * nd, PLOT_BARS, NULL};
    }
    double xticks[MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        xticks[i] = (double)o->dims[i];
    }
    char title[160];
    snprintf(title, sizeof title, "(a) tau + T: mean, min-max band (%lld pairs; hollow: some capped at %lld)",
             (long long)o->reps, (long long)o->cap);
    plot_axes left = {title, "d (visible = hidden units)", "steps tau + T", 1, 1, 0, 0, 0, 0,
                      xticks, nd, PLOT_TOP_LEFT, series, n_series};
    plot_axes right = {"(b) MH + LMI: mean, min-max bars", "d (visible = hidden units)",
                       "steps", 1, 0, 0, 0, 0, 0, xticks, nd, PLOT_TOP_LEFT, split, 2};
    const int wl = 1100, wr = have_mh_lmi ? 700 : 0, h = 650;
    plot_canvas c;
    char path[4200];
    snprintf(path, sizeof path, "%s/coupling_times.png", o->out);
    if (plot_canvas_create(&c, wl + wr, h) != 0) {
        cli_die(PROG, "plot_canvas_create", EBM_ENOMEM, "canvas");
    }
    if (plot_draw(&c, 0, 0, wl, h, &left) != 0 ||
        (have_mh_lmi && plot_draw(&c, wl, 0, wr, h, &right) != 0)) {
        fprintf(stderr, "coupling_times: nothing to plot\n");
    } else {
        int rc = plot_save_png(&c, path);
        if (rc != IMAGE_OK) {
            fprintf(stderr, "coupling_times: cannot write %s: %s (%s)\n", path,
                    image_strerror(rc), strerror(errno));
            exit(1);
        }
        fprintf(stderr, "wrote %s\n", path);
    }
    plot_canvas_destroy(&c);
    free(open);
    free(buf);
}

int main(int argc, char **argv)
{
    options o;
    const int parsed = parse_options(argc, argv, &o);
    if (parsed != 0) {
        return parsed == 1 ? 0 : 2;
    }
    if (cli_make_dirs(o.out) != 0) {
        fprintf(stderr, "coupling_times: cannot create %s: %s\n", o.out, strerror(errno));
        return 1;
    }
    int n_use = 0;
    for (int k = 0; k < N_METHODS; k++) {
        n_use += o.use[k];
    }
    result *res = calloc((size_t)(o.n_dims * n_use), sizeof *res);
    if (res == NULL) {
        cli_die(PROG, "calloc", EBM_ENOMEM, "results");
    }
    int n_res = 0;
    double start = cli_now();
    for (int di = 0; di < o.n_dims; di++) {
        const int64_t d = o.dims[di], sizes[4] = {d, d, d, d};
        ebm_model_t *m;
        ebm_rng_t *rng;
        char err[256];
        int rc = ebm_model_create(&m, o.layers, sizes, EBM_UNITS_SPIN, EBM_UNITS_SPIN, err,
                                  sizeof err);
        if (rc != EBM_OK) {
            cli_die(PROG, "ebm_model_create", rc, err);
        }
        /* The model of size d comes from stream d of the seed. */
        if ((rc = ebm_rng_create(&rng, o.seed, (uint64_t)d)) != EBM_OK) {
            cli_die(PROG, "ebm_rng_create", rc, "");
        }
        if ((rc = ebm_model_init(m, rng, EBM_INIT_ORTHOGONAL, 1.0)) != EBM_OK) {
            cli_die(PROG, "ebm_model_init", rc, ebm_model_errmsg(m));
        }
        ebm_rng_destroy(rng);
        for (int me = 0; me < N_METHODS; me++) {
            if (!o.use[me]) {
                continue;
            }
            result *r = &res[n_res++];
            r->d = d;
            r->di = di;
            r->method = me;
            r->tau = malloc((size_t)o.reps * sizeof *r->tau);
            r->T = malloc((size_t)o.reps * sizeof *r->T);
            r->capped = malloc((size_t)o.reps);
            if (r->tau == NULL || r->T == NULL || r->capped == NULL) {
                cli_die(PROG, "malloc", EBM_ENOMEM, "results");
            }
            /* Chains of method me at size d: stream 2^32 + 64 d + me. */
            uint64_t stream = (UINT64_C(1) << 32) + 64 * (uint64_t)d + (uint64_t)me;
            if ((rc = ebm_rng_create(&rng, o.seed, stream)) != EBM_OK) {
                cli_die(PROG, "ebm_rng_create", rc, "");
            }
            double t0 = cli_now();
            run_method(m, &methods[me], &o, rng, r);
            r->seconds = cli_now() - t0;
            ebm_rng_destroy(rng);
            summarise(r, o.reps);
            fprintf(stderr, "d=%-4lld %-14s mean tau+T %s%.2f, %lld capped, %.2f s\n",
                    (long long)d, methods[me].name, r->n_capped ? ">=" : "", r->mean,
                    (long long)r->n_capped, r->seconds);
        }
        ebm_model_destroy(m);
    }
    print_table(res, n_res, &o);
    printf("total %.1f s\n", cli_now() - start);
    write_csv(res, n_res, &o);
    write_plot(res, n_res, &o);
    for (int k = 0; k < n_res; k++) {
        free(res[k].tau);
        free(res[k].T);
        free(res[k].capped);
    }
    free(res);
    return 0;
}
