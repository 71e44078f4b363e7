/*
 * plot_curves: training curves from the trainers' CSV logs, as a PNG.
 *
 *   plot_curves --out curves.png [--x step|seconds|...] [--y grad_norm,...]
 *               [--title TEXT] [--log-y] LABEL=FILE.csv [LABEL=FILE.csv ...]
 *
 * Each CSV (train.csv of train_ucd_lmi / train_pcd / train_ucd, or
 * train_grbm.csv) starts with a header line of column names; every later
 * line holds numbers. One panel per --y column, one series per file; a file
 * without that column is left out of the panel. Long logs are thinned to at
 * most 400 evenly spaced rows. Used by docs/results.md.
 */
#include "common/cli.h"
#include "common/plot.h"

#include <ebm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "plot_curves"

enum { MAX_FILES = 8, MAX_COLS = 32, MAX_Y = 4 };

typedef struct table {
    char label[64];
    char names[MAX_COLS][48];
    int n_cols;
    int64_t n_rows;
    double *v; /* n_rows x n_cols */
} table;

static void usage(FILE *f)
{
    fprintf(f, "usage: plot_curves --out FILE.png [--x COLUMN] [--y COL1,COL2,...] "
               "[--title TEXT] [--log-y] LABEL=FILE.csv ...\n"
               "  Training curves from the trainers' CSV logs: one panel per --y column\n"
               "  (default grad_norm), one series per file; --x defaults to seconds.\n");
}

static int column(const table *t, const char *name)
{
    for (int c = 0; c < t->n_cols; c++) {
        if (strcmp(t->names[c], name) == 0) {
            return c;
        }
    }
    return -1;
}

/* Read a CSV with a header line; exits with a message on failure. */
static void read_table(table *t, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (eq == NULL || eq == spec || (size_t)(eq - spec) >= sizeof t->label) {
        fprintf(stderr, "%s: %s: expected LABEL=FILE.csv\n", PROG, spec);
        exit(2);
    }
    memcpy(t->label, spec, (size_t)(eq - spec));
    t->label[eq - spec] = '\0';
    FILE *f = fopen(eq + 1, "r");
    if (f == NULL) {
        perror(eq + 1);
        exit(1);
    }
    char line[4096];
    if (fgets(line, sizeof line, f) == NULL) {
        fprintf(stderr, "%s: %s is empty\n", PROG, eq + 1);
        exit(1);
    }
    t->n_cols = 0;
    for (char *tok = strtok(line, ",\r\n"); tok != NULL && t->n_cols < MAX_COLS;
         tok = strtok(NULL, ",\r\n")) {
        snprintf(t->names[t->n_cols++], sizeof t->names[0], "%s", tok);
    }
    int64_t cap = 1024;
    t->v = cli_xmalloc(PROG, (size_t)(cap * t->n_cols) * sizeof *t->v);
    t->n_rows = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (t->n_rows == cap) {
            cap *= 2;
            double *v = realloc(t->v, (size_t)(cap * t->n_cols) * sizeof *v);
            if (v == NULL) {
                cli_die(PROG, "realloc", EBM_ENOMEM, "out of memory");
            }
            t->v = v;
        }
        char *p = line;
        for (int c = 0; c < t->n_cols; c++) {
            char *end;
            double x = strtod(p, &end);
            t->v[t->n_rows * t->n_cols + c] = end == p ? NAN : x;
            p = strchr(end, ',');
            if (p == NULL) {
                for (int d = c + 1; d < t->n_cols; d++) {
                    t->v[t->n_rows * t->n_cols + d] = NAN;
                }
                break;
            }
            p++;
        }
        t->n_rows++;
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    const char *out = NULL, *xname = "seconds", *ylist = "grad_norm", *title = NULL;
    int log_y = 0, n_files = 0;
    table files[MAX_FILES];
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val;
        size_t len;
        if (strncmp(arg, "--", 2) != 0 && strcmp(arg, "-h") != 0) {
            if (n_files == MAX_FILES) {
                fprintf(stderr, "%s: at most %d files\n", PROG, MAX_FILES);
                return 2;
            }
            read_table(&files[n_files++], arg);
            continue;
        }
        if (strcmp(arg, "--log-y") == 0) {
            log_y = 1;
            continue;
        }
        if (cli_option(argc, argv, &i, &len, &val, PROG, usage) != 0) {
            return 2;
        }
        if (cli_is_option(arg, len, "--out")) {
            out = val;
        } else if (cli_is_option(arg, len, "--x")) {
            xname = val;
        } else if (cli_is_option(arg, len, "--y")) {
            ylist = val;
        } else if (cli_is_option(arg, len, "--title")) {
            title = val;
        } else {
            cli_unknown_option(PROG, arg, usage);
            return 2;
        }
    }
    if (out == NULL || n_files == 0) {
        usage(stderr);
        return 2;
    }
    char ybuf[256], *ynames[MAX_Y];
    int n_y = 0;
    snprintf(ybuf, sizeof ybuf, "%s", ylist);
    for (char *tok = strtok(ybuf, ","); tok != NULL && n_y < MAX_Y; tok = strtok(NULL, ",")) {
        ynames[n_y++] = tok;
    }
    const int panel_w = 640, panel_h = 420, title_h = title != NULL ? 30 : 0;
    plot_canvas canvas;
    if (plot_canvas_create(&canvas, panel_w * n_y, panel_h + title_h) != 0) {
        cli_die(PROG, "plot_canvas_create", EBM_ENOMEM, "canvas");
    }
    if (title != NULL) {
        const uint8_t black[3] = {0, 0, 0};
        plot_text(&canvas, 12, 8, 2, black, title);
    }
    double *xs[MAX_FILES], *ys[MAX_FILES];
    for (int k = 0; k < n_y; k++) {
        plot_series series[MAX_FILES];
        int n_series = 0;
        for (int f = 0; f < n_files; f++) {
            const table *t = &files[f];
            int cx = column(t, xname), cy = column(t, ynames[k]);
            xs[f] = ys[f] = NULL;
            if (cx < 0 || cy < 0) {
                continue;
            }
            xs[f] = cli_xmalloc(PROG, (size_t)t->n_rows * sizeof *xs[f]);
            ys[f] = cli_xmalloc(PROG, (size_t)t->n_rows * sizeof *ys[f]);
            const int64_t stride = (t->n_rows + 399) / 400;
            int64_t n = 0;
            for (int64_t r = 0; r < t->n_rows; r += stride > 0 ? stride : 1) {
                xs[f][n] = t->v[r * t->n_cols + cx];
                ys[f][n++] = t->v[r * t->n_cols + cy];
            }
            series[n_series++] = (plot_series){t->label, (int)n, xs[f], ys[f], NULL, NULL,
                                               PLOT_BAND, NULL};
        }
        if (n_series > 0) {
            plot_axes axes = {NULL, xname, ynames[k], 0, log_y, 0, 0, 0, 0, NULL, 0,
                              PLOT_TOP_RIGHT, series, n_series};
            if (plot_draw(&canvas, k * panel_w, title_h, panel_w, panel_h, &axes) != 0) {
                fprintf(stderr, "%s: nothing to draw for %s\n", PROG, ynames[k]);
            }
        } else {
            fprintf(stderr, "%s: no file has columns %s and %s\n", PROG, xname, ynames[k]);
        }
        for (int f = 0; f < n_files; f++) {
            if (column(&files[f], xname) >= 0 && column(&files[f], ynames[k]) >= 0) {
                free(xs[f]);
                free(ys[f]);
            }
        }
    }
    int rc = plot_save_png(&canvas, out);
    plot_canvas_destroy(&canvas);
    for (int f = 0; f < n_files; f++) {
        free(files[f].v);
    }
    if (rc != 0) {
        fprintf(stderr, "%s: cannot write %s\n", PROG, out);
        return 1;
    }
    printf("%s: wrote %s\n", PROG, out);
    return 0;
}
