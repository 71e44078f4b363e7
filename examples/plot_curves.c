/*
 * plot_curves: training curves from the trainers' CSV logs, as a PNG.
 *
 *   plot_curves --out curves.png [--x step|seconds|...] [--y grad_norm,...]
 *               [--title TEXT] [--log-y] LABEL=FILE.csv [LABEL=FILE.csv ...]
 *
 * Each CSV (train.csv of train_ucd_lmi / train_pcd / train_ucd, or
 * train_grbm.csv) starts with a header line of column names; every later
 * line holds numbers ("nan" or an empty field: no value). One panel per --y
 * column, one series per file; a file without that column is left out of the
 * panel, with a note. Long logs are thinned to at most 400 evenly spaced
 * rows. Used by docs/results.md.
 *
 * Exit status 0 when the PNG was written; 2 for a bad command line; 1 when a
 * file cannot be read or is malformed (too many columns, a field that is not
 * a number, a line with more fields than the header), when a requested column
 * (--x or one of --y) is in none of the files, when a panel has no finite
 * point to draw, or when the PNG cannot be written: each with a message
 * naming the file, the line or the column. A last line without its newline
 * (a log still being written) is skipped with a note.
 */
#include "common/cli.h"
#include "common/plot.h"

#include <ebm.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "plot_curves"

enum { MAX_FILES = 8, MAX_COLS = 32, MAX_Y = 4, MAX_NAME = 48, MAX_LINE = 4096 };

typedef struct table {
    char label[64];
    const char *path;
    char names[MAX_COLS][MAX_NAME];
    int n_cols;
    int64_t n_rows;
    double *v; /* n_rows x n_cols */
} table;

typedef struct files {
    table t[MAX_FILES];
    int n;
    int unreadable; /* a file could not be read or was malformed: exit status 1 */
} files;

/* Split one line into fields (at most max); NUL-terminates them in place.
 * @return the number of fields, or max + 1 if there are more */
static int split_fields(char *line, char **field, int max)
{
    line[strcspn(line, "\r\n")] = '\0';
    int n = 0;
    for (char *p = line;; p++) {
        if (n == max) {
            return max + 1;
        }
        field[n++] = p;
        p += strcspn(p, ",");
        if (*p == '\0') {
            return n;
        }
        *p = '\0';
    }
}

/* Read a CSV with a header line. @return 0, or 1 after a message naming the
 * file and the line */
static int read_table(table *t, const char *path)
{
    t->path = path;
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "%s: %s: %s\n", PROG, path, strerror(errno));
        return 1;
    }
    char line[MAX_LINE + 2], *field[MAX_COLS + 1];
    int rc = 0;
    int64_t lineno = 1, cap = 1024;
    if (fgets(line, sizeof line, f) == NULL) {
        fprintf(stderr, "%s: %s is empty (no header line)\n", PROG, path);
        fclose(f);
        return 1;
    }
    if (strchr(line, '\n') == NULL && !feof(f)) {
        fprintf(stderr, "%s: %s: the header is longer than %d characters\n", PROG, path,
                MAX_LINE);
        fclose(f);
        return 1;
    }
    t->n_cols = split_fields(line, field, MAX_COLS);
    if (t->n_cols > MAX_COLS) {
        fprintf(stderr, "%s: %s: more than %d columns\n", PROG, path, MAX_COLS);
        fclose(f);
        return 1;
    }
    for (int c = 0; c < t->n_cols; c++) {
        if (field[c][0] == '\0' || strlen(field[c]) >= MAX_NAME) {
            fprintf(stderr, "%s: %s: column %d of the header is %s\n", PROG, path, c + 1,
                    field[c][0] == '\0' ? "empty" : "too long");
            fclose(f);
            return 1;
        }
        snprintf(t->names[c], sizeof t->names[c], "%s", field[c]);
    }
    t->v = cli_xmalloc(PROG, (size_t)(cap * t->n_cols) * sizeof *t->v);
    t->n_rows = 0;
    while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
        lineno++;
        if (strchr(line, '\n') == NULL) {
            if (!feof(f)) {
                fprintf(stderr, "%s: %s:%lld: longer than %d characters\n", PROG, path,
                        (long long)lineno, MAX_LINE);
                rc = 1;
            } else {
                fprintf(stderr, "%s: note: %s:%lld has no newline (still being written?); "
                                "skipped\n", PROG, path, (long long)lineno);
            }
            break;
        }
        if (line[strspn(line, " \t\r\n")] == '\0') {
            continue; /* a blank line */
        }
        const int n = split_fields(line, field, MAX_COLS);
        if (n != t->n_cols) {
            fprintf(stderr, "%s: %s:%lld: %d fields, the header has %d\n", PROG, path,
                    (long long)lineno, n > MAX_COLS ? MAX_COLS + 1 : n, t->n_cols);
            rc = 1;
            break;
        }
        if (t->n_rows == cap) {
            cap *= 2;
            double *v = realloc(t->v, (size_t)(cap * t->n_cols) * sizeof *v);
            if (v == NULL) {
                cli_die(PROG, "realloc", EBM_ENOMEM, "out of memory");
            }
            t->v = v;
        }
        for (int c = 0; c < n && rc == 0; c++) {
            char *end;
            const double x = strtod(field[c], &end);
            if (end == field[c] && field[c][strspn(field[c], " ")] == '\0') {
                t->v[t->n_rows * t->n_cols + c] = NAN; /* an empty field */
            } else if (end == field[c] || end[strspn(end, " ")] != '\0') {
                fprintf(stderr, "%s: %s:%lld: column %s: '%s' is not a number\n", PROG, path,
                        (long long)lineno, t->names[c], field[c]);
                rc = 1;
            } else {
                t->v[t->n_rows * t->n_cols + c] = x;
            }
        }
        t->n_rows += rc == 0;
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "%s: %s: read error: %s\n", PROG, path, strerror(errno));
        rc = 1;
    }
    fclose(f);
    return rc;
}

/* A positional argument: LABEL=FILE.csv. */
static int add_file(const char *spec, void *ctx)
{
    files *fs = ctx;
    const char *eq = strchr(spec, '=');
    if (eq == NULL || eq == spec || eq[1] == '\0' || (size_t)(eq - spec) >= sizeof fs->t[0].label) {
        fprintf(stderr, "%s: %s: expected LABEL=FILE.csv (a label of 1 to %d characters)\n", PROG,
                spec, (int)sizeof fs->t[0].label - 1);
        return -1;
    }
    if (fs->n == MAX_FILES) {
        fprintf(stderr, "%s: at most %d files\n", PROG, MAX_FILES);
        return -1;
    }
    table *t = &fs->t[fs->n];
    memset(t, 0, sizeof *t);
    memcpy(t->label, spec, (size_t)(eq - spec));
    t->label[eq - spec] = '\0';
    if (read_table(t, eq + 1) != 0) {
        free(t->v);
        fs->unreadable = 1;
        return -1;
    }
    fs->n++;
    return 0;
}

static int column(const table *t, const char *name);

int main(int argc, char **argv)
{
    const char *out = NULL, *xname = "seconds", *ylist = "grad_norm", *title = NULL;
    int log_y = 0;
    static files fs;
    const cli_spec specs[] = {
        CLI_STR("--out", "FILE.png", &out, "the picture to write (required)"),
        CLI_STR("--x", "COLUMN", &xname, "the column of the x axis"),
        CLI_STR("--y", "COL1,COL2,...", &ylist, "one panel per column, at most 4"),
        CLI_STR("--title", "TEXT", &title, "a title above the panels"),
        {.type = CLI_FLAG, .name = "--log-y", .field = &log_y, .help = "logarithmic y axes"},
    };
    const cli_program p = {
        PROG, "--out FILE.png [options] LABEL=FILE.csv ...",
        "  Training curves from the trainers' CSV logs (train.csv, train_grbm.csv): one\n"
        "  panel per --y column, one series per file (at most 8), labelled LABEL.\n",
        specs, (int)(sizeof specs / sizeof specs[0]),
        "Exit status: 0 when the PNG was written, 2 for a bad command line, 1 for a\n"
        "file that cannot be read or is malformed, a column in none of the files, a\n"
        "panel with nothing to draw, or a PNG that cannot be written.\n",
        add_file, &fs};
    const int parsed = cli_parse(&p, argc, argv);
    if (parsed != 0) {
        for (int f = 0; f < fs.n; f++) {
            free(fs.t[f].v);
        }
        return parsed == 1 ? 0 : fs.unreadable ? 1 : 2;
    }
    if (out == NULL || fs.n == 0) {
        fprintf(stderr, "%s: %s (--help shows the usage)\n", PROG,
                out == NULL ? "--out FILE.png is required" : "give at least one LABEL=FILE.csv");
        for (int f = 0; f < fs.n; f++) {
            free(fs.t[f].v);
        }
        return 2;
    }
    char ybuf[256], *ynames[MAX_Y + 1];
    int n_y = 0;
    if (snprintf(ybuf, sizeof ybuf, "%s", ylist) >= (int)sizeof ybuf) {
        fprintf(stderr, "%s: --y is too long\n", PROG);
        return 2;
    }
    for (char *tok = strtok(ybuf, ","); tok != NULL && n_y <= MAX_Y; tok = strtok(NULL, ",")) {
        ynames[n_y++] = tok;
    }
    if (n_y == 0 || n_y > MAX_Y) {
        fprintf(stderr, "%s: --y needs 1 to %d column names\n", PROG, MAX_Y);
        return 2;
    }
    /* Every requested column must be in some file; a file without it is left
     * out of that panel, with a note. */
    int missing = 0;
    for (int k = -1; k < n_y; k++) {
        const char *name = k < 0 ? xname : ynames[k];
        int found = 0;
        for (int f = 0; f < fs.n; f++) {
            found += column(&fs.t[f], name) >= 0;
        }
        if (found == 0) {
            fprintf(stderr, "%s: no column %s in %s", PROG, name, fs.n > 1 ? "any of " : "");
            for (int f = 0; f < fs.n; f++) {
                fprintf(stderr, "%s%s", f ? ", " : "", fs.t[f].path);
            }
            fprintf(stderr, " (%s has:", fs.t[0].path);
            for (int c = 0; c < fs.t[0].n_cols; c++) {
                fprintf(stderr, " %s", fs.t[0].names[c]);
            }
            fprintf(stderr, ")\n");
            missing = 1;
        } else if (found < fs.n) {
            for (int f = 0; f < fs.n; f++) {
                if (column(&fs.t[f], name) < 0) {
                    fprintf(stderr, "%s: note: %s has no column %s; left out of that panel\n",
                            PROG, fs.t[f].path, name);
                }
            }
        }
    }
    if (missing) {
        for (int f = 0; f < fs.n; f++) {
            free(fs.t[f].v);
        }
        return 1;
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
    int rc = 0;
    double *xs[MAX_FILES], *ys[MAX_FILES];
    for (int k = 0; k < n_y; k++) {
        plot_series series[MAX_FILES];
        int n_series = 0;
        for (int f = 0; f < fs.n; f++) {
            const table *t = &fs.t[f];
            const int cx = column(t, xname), cy = column(t, ynames[k]);
            xs[f] = ys[f] = NULL;
            if (cx < 0 || cy < 0) {
                continue;
            }
            xs[f] = cli_xmalloc(PROG, (size_t)t->n_rows * sizeof *xs[f]);
            ys[f] = cli_xmalloc(PROG, (size_t)t->n_rows * sizeof *ys[f]);
            /* Thin to at most 400 rows, among those with a value (a held-out
             * column has one every --eval-every steps). */
            int64_t have = 0, n = 0;
            for (int64_t r = 0; r < t->n_rows; r++) {
                have += isfinite(t->v[r * t->n_cols + cx]) && isfinite(t->v[r * t->n_cols + cy]);
            }
            const int64_t stride = have > 400 ? (have + 399) / 400 : 1;
            for (int64_t r = 0, seen = 0; r < t->n_rows; r++) {
                const double x = t->v[r * t->n_cols + cx], y = t->v[r * t->n_cols + cy];
                if (isfinite(x) && isfinite(y) && seen++ % stride == 0) {
                    xs[f][n] = x;
                    ys[f][n++] = y;
                }
            }
            series[n_series++] = (plot_series){t->label, (int)n, xs[f], ys[f], NULL, NULL,
                                               PLOT_BAND, NULL};
        }
        plot_axes axes = {NULL, xname, ynames[k], 0, log_y, 0, 0, 0, 0, NULL, 0,
                          PLOT_TOP_RIGHT, series, n_series};
        if (plot_draw(&canvas, k * panel_w, title_h, panel_w, panel_h, &axes) != 0) {
            fprintf(stderr, "%s: nothing to draw for %s against %s: no row has finite values%s\n",
                    PROG, ynames[k], xname, log_y ? " (> 0 on the log axis)" : "");
            rc = 1;
        }
        for (int f = 0; f < fs.n; f++) {
            free(xs[f]);
            free(ys[f]);
        }
    }
    if (rc == 0 && plot_save_png(&canvas, out) != 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", PROG, out, strerror(errno));
        rc = 1;
    }
    plot_canvas_destroy(&canvas);
    for (int f = 0; f < fs.n; f++) {
        free(fs.t[f].v);
    }
    if (rc == 0) {
        printf("%s: wrote %s\n", PROG, out);
    }
    return rc;
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
