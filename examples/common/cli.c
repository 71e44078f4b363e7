/* Helpers shared by the example programs: see cli.h. */
#include "cli.h"

#include <ebm.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int cli_is_option(const char *arg, size_t len, const char *name)
{
    return strlen(name) == len && strncmp(arg, name, len) == 0;
}

int cli_parse_names(const char *list, const char *const *names, int n_names, int *use, char *bad,
                    size_t bad_size)
{
    int n = 0;
    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",");
        int k = 0;
        while (k < n_names && !cli_is_option(p, len, names[k])) {
            k++;
        }
        if (len > 0 && k == n_names) {
            snprintf(bad, bad_size, "%.*s", (int)len, p);
            return -1;
        }
        if (len > 0) {
            n += !use[k];
            use[k] = 1;
        }
        p += len + (p[len] == ',');
    }
    return n;
}

int cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < lo || v > hi) {
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_step_or_off(const char *val, void *field)
{
    if (strcmp(val, "off") == 0) {
        *(int64_t *)field = -1;
        return 0;
    }
    return cli_parse_int(val, 0, INT64_C(1) << 50, field);
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_format_duration(double seconds, char *buf, size_t size)
{
    if (!isfinite(seconds) || seconds < 0.0) {
        snprintf(buf, size, "?");
    } else if (seconds < 1.0) {
        snprintf(buf, size, "%.0f ms", 1e3 * seconds);
    } else if (seconds < 60.0) {
        snprintf(buf, size, "%.1f s", seconds);
    } else if (seconds < 3600.0) {
        long s = lround(seconds);
        snprintf(buf, size, "%ldm%02lds", s / 60, s % 60);
    } else {
        long mins = lround(seconds / 60.0);
        snprintf(buf, size, "%ldh%02ldm", mins / 60, mins % 60);
    }
}

int cli_open_file(const char *path, size_t *size, char *err, size_t err_size)
{
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        cli_set_error(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    const char *wrong = NULL;
    int code = 0;
    if (fstat(fd, &st) != 0) {
        code = errno;
        wrong = strerror(code);
    } else if (S_ISDIR(st.st_mode)) {
        code = EISDIR;
        wrong = "a directory, not a file";
    } else if (!S_ISREG(st.st_mode)) {
        code = EINVAL;
        wrong = S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file"
                                     : "not a regular file (a device or a socket)";
    } else if ((uintmax_t)st.st_size >= SIZE_MAX) {
        code = EFBIG;
        wrong = "too large for memory";
    } else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        code = errno;
        wrong = strerror(code);
    }
    if (wrong != NULL) {
        cli_set_error(err, err_size, "%s: cannot read: %s", path, wrong);
        close(fd);
        errno = code;
        return -1;
    }
    *size = (size_t)st.st_size;
    return fd;
}

/* The length of a log's part that a run resumed at `step` keeps: the header
 * and the whole rows of steps up to `step`. */
static off_t log_rows_through(FILE *f, int64_t step)
{
    char *line = NULL;
    size_t cap = 0;
    off_t keep = 0;
    ssize_t n;
    for (int row = 0; (n = getline(&line, &cap, f)) > 0 && line[n - 1] == '\n'; row++) {
        if (row > 0) {
            char *end;
            errno = 0;
            const long long s = strtoll(line, &end, 10);
            if (errno != 0 || end == line || *end != ',' || s > step) {
                break;
            }
        }
        keep += (off_t)n;
    }
    free(line);
    return keep;
}

int cli_open_log(FILE **out, const char *path, const char *header, int64_t resume_step,
                 const char *hint, char *err, size_t err_size)
{
    off_t keep = 0;
    if (resume_step >= 0) {
        size_t size;
        const int fd = cli_open_file(path, &size, err, err_size);
        if (fd < 0 && errno != ENOENT) {
            return CLI_LOG_EIO;
        }
        FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
        if (fd >= 0 && f == NULL) {
            cli_set_error(err, err_size, "%s: cannot read: %s", path, strerror(errno));
            close(fd);
            return CLI_LOG_EIO;
        }
        char *first = NULL;
        size_t cap = 0;
        const ssize_t n = f != NULL ? getline(&first, &cap, f) : -1;
        if (n > 0 && first[n - 1] == '\n' && strcmp(first, header) != 0) {
            cli_set_error(err, err_size, "%s has other columns than this run writes%s:\n"
                          "  it has: %s  now:    %s", path, hint, first, header);
            free(first);
            fclose(f);
            return CLI_LOG_OTHER_COLUMNS;
        }
        free(first);
        if (f != NULL) {
            rewind(f);
            keep = log_rows_through(f, resume_step);
            fclose(f);
            if ((size_t)keep < size && truncate(path, keep) != 0) {
                cli_set_error(err, err_size, "%s: cannot cut it to the checkpoint's step %lld: %s",
                              path, (long long)resume_step, strerror(errno));
                return CLI_LOG_EIO;
            }
        }
    }
    *out = fopen(path, keep > 0 ? "a" : "w");
    if (*out == NULL) {
        cli_set_error(err, err_size, "%s: cannot write: %s", path, strerror(errno));
        return CLI_LOG_EIO;
    }
    if (keep == 0) {
        fputs(header, *out);
    }
    return 0;
}

int cli_make_dirs(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                return -1;
            }
            if ((*p = c) == '\0') {
                return 0;
            }
        }
    }
}

void cli_set_error(char *buf, size_t size, const char *fmt, ...)
{
    if (buf == NULL || size == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

static volatile sig_atomic_t stop_signal = 0;

static void on_stop_signal(int sig)
{
    if (stop_signal == 0) {
        stop_signal = sig;
    }
}

int cli_catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    return sigaction(SIGINT, &sa, NULL) == 0 && sigaction(SIGTERM, &sa, NULL) == 0 ? 0 : -1;
}

int cli_stop_signal(void)
{
    return stop_signal;
}

const char *cli_signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal";
}

void cli_die(const char *prog, const char *what, int rc, const char *msg)
{
    fprintf(stderr, "%s: %s failed: %s (%s)\n", prog, what, ebm_error_name(rc), msg);
    exit(1);
}

void *cli_xmalloc(const char *prog, size_t size)
{
    void *p = malloc(size > 0 ? size : 1);
    if (p == NULL) {
        cli_die(prog, "malloc", EBM_ENOMEM, "out of memory");
    }
    return p;
}

/* ------------------------------------------------------------------------ */
/* Option tables                                                            */
/* ------------------------------------------------------------------------ */

/* Upper bounds at or past these print as no bound ("N >= 1"): they only keep
 * sizes inside what the program can allocate or count. */
#define CLI_INT_NO_BOUND (INT64_C(1) << 40)
#define CLI_DOUBLE_NO_BOUND 1e9
/* A lower bound this small (and > 0) means "strictly positive". */
#define CLI_DOUBLE_POSITIVE 1e-9

/* The accepted values in the short form --help shows: "1..4096", ">= 1",
 * "> 0", "(0, 1e+06]", "[0, 1]". Empty for text and flags. */
static void short_range(const cli_spec *s, char *buf, size_t size)
{
    buf[0] = '\0';
    if (s->range != NULL) {
        snprintf(buf, size, "%s", s->range);
        return;
    }
    switch (s->type) {
    case CLI_INT64:
    case CLI_INT:
        if (s->ihi >= CLI_INT_NO_BOUND) {
            snprintf(buf, size, ">= %lld", (long long)s->ilo);
        } else {
            snprintf(buf, size, "%lld..%lld", (long long)s->ilo, (long long)s->ihi);
        }
        break;
    case CLI_SEED:
        snprintf(buf, size, "0..%lld", (long long)INT64_MAX);
        break;
    case CLI_DOUBLE: {
        const int positive = s->dlo > 0.0 && s->dlo <= CLI_DOUBLE_POSITIVE;
        const char *x = s->meta != NULL ? s->meta : "X";
        if (s->dhi >= CLI_DOUBLE_NO_BOUND) {
            if (positive) {
                snprintf(buf, size, "%s > 0", x);
            } else {
                snprintf(buf, size, "%s >= %g", x, s->dlo);
            }
        } else if (positive) {
            snprintf(buf, size, "0 < %s <= %g", x, s->dhi);
        } else {
            snprintf(buf, size, "%g <= %s <= %g", s->dlo, x, s->dhi);
        }
        break;
    }
    case CLI_CHOICE: {
        size_t at = 0;
        for (int k = s->first_choice; k < s->n_choices && at < size; k++) {
            int n = snprintf(buf + at, size - at, "%s%s", k > s->first_choice ? "|" : "",
                             s->choices[k]);
            at += n > 0 ? (size_t)n : 0;
        }
        break;
    }
    default:
        break;
    }
}

void cli_spec_range(const cli_spec *s, char *buf, size_t size)
{
    char r[512];
    short_range(s, r, sizeof r);
    if (s->range != NULL || s->type == CLI_TEXT || s->type == CLI_CUSTOM) {
        snprintf(buf, size, "%s", r[0] != '\0' ? r : "a value");
    } else if (s->type == CLI_CHOICE) {
        size_t at = (size_t)snprintf(buf, size, "one of ");
        for (int k = s->first_choice; k < s->n_choices && at < size; k++) {
            int n = snprintf(buf + at, size - at, "%s%s", k > s->first_choice ? ", " : "",
                             s->choices[k]);
            at += n > 0 ? (size_t)n : 0;
        }
    } else if (s->type == CLI_DOUBLE) {
        snprintf(buf, size, "a number with %s", r);
    } else {
        snprintf(buf, size, "an integer %s%s", r[0] == '>' ? "" : "in ", r);
    }
}

/* The field's value as --help shows it as the default. */
static void value_text(const cli_spec *s, char *buf, size_t size)
{
    if (s->dflt != NULL) {
        snprintf(buf, size, "%s", s->dflt);
        return;
    }
    switch (s->type) {
    case CLI_INT64: snprintf(buf, size, "%lld", (long long)*(const int64_t *)s->field); break;
    case CLI_INT: snprintf(buf, size, "%d", *(const int *)s->field); break;
    case CLI_DOUBLE: snprintf(buf, size, "%g", *(const double *)s->field); break;
    case CLI_SEED:
        snprintf(buf, size, "%llu", (unsigned long long)*(const uint64_t *)s->field);
        break;
    case CLI_CHOICE: {
        const int k = *(const int *)s->field;
        snprintf(buf, size, "%s", k >= 0 && k < s->n_choices ? s->choices[k] : "?");
        break;
    }
    case CLI_TEXT: {
        const char *v = *(const char *const *)s->field;
        snprintf(buf, size, "%s", v != NULL ? v : "none");
        break;
    }
    case CLI_FLAG: snprintf(buf, size, "%s", *(const int *)s->field ? "on" : "off"); break;
    default: buf[0] = '\0'; break;
    }
}

/* Print words of text from column col, wrapping at 79 to column indent; a
 * '\1' is a space that does not break. */
static void wrap(FILE *f, const char *text, int col, int indent)
{
    const char *p = text;
    while (*p != '\0') {
        while (*p == ' ') {
            p++;
        }
        const size_t n = strcspn(p, " ");
        if (n == 0) {
            break;
        }
        if (col > indent && col + 1 + (int)n > 79) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        for (size_t k = 0; k < n; k++) {
            fputc(p[k] == '\1' ? ' ' : p[k], f);
        }
        col += (int)n;
        p += n;
    }
    fputc('\n', f);
}

/* One option's entry; dflt_text NULL: the field's value now. */
static void usage_entry(const cli_spec *s, const char *dflt_text, FILE *f)
{
    enum { INDENT = 26 };
    if (s->type == CLI_SECTION) {
        fprintf(f, "%s\n", s->name);
        return;
    }
    char head[1024], range[512], dflt[512], text[2048];
    if (s->type == CLI_CHOICE) {
        char choices[512];
        short_range(s, choices, sizeof choices);
        snprintf(head, sizeof head, "  %s %s", s->name, choices);
        range[0] = '\0';
    } else {
        snprintf(head, sizeof head, "  %s%s%s", s->name, s->meta != NULL ? " " : "",
                 s->meta != NULL ? s->meta : "");
        short_range(s, range, sizeof range);
    }
    for (char *c = range; *c != '\0'; c++) {
        *c = *c == ' ' ? '\1' : *c; /* wrap keeps "0 < X <= 1" on one line */
    }
    if (dflt_text != NULL) {
        snprintf(dflt, sizeof dflt, "%s", dflt_text);
    } else {
        value_text(s, dflt, sizeof dflt);
    }
    snprintf(text, sizeof text, "%s (%s%s%sdefault %s)", s->help != NULL ? s->help : "",
             range[0] != '\0' ? "range " : "", range, range[0] != '\0' ? ", " : "", dflt);
    int col = (int)strlen(head);
    fputs(head, f);
    if (col + 2 > INDENT) {
        fprintf(f, "\n%*s", INDENT, "");
    } else {
        fprintf(f, "%*s", INDENT - col, "");
    }
    wrap(f, text, INDENT, INDENT);
}

static void usage_with(const cli_program *p, char (*dflt)[256], FILE *f)
{
    fprintf(f, "usage: %s %s\n", p->prog, p->synopsis != NULL ? p->synopsis : "[options]");
    if (p->about != NULL) {
        fputs(p->about, f);
    }
    for (int k = 0; k < p->n_specs; k++) {
        usage_entry(&p->specs[k], dflt != NULL ? dflt[k] : NULL, f);
    }
    fprintf(f, "  %-24sthis text\n", "--help, -h");
    if (p->epilog != NULL) {
        fputs(p->epilog, f);
    }
}

void cli_usage(const cli_program *p, FILE *f)
{
    usage_with(p, NULL, f);
}

/* Put val into s's field. @return 0, or -1 (a bad value; nothing written) */
static int set_value(const cli_spec *s, const char *val)
{
    int64_t iv;
    double dv;
    switch (s->type) {
    case CLI_INT64:
        if (cli_parse_int(val, s->ilo, s->ihi, &iv) != 0) {
            return -1;
        }
        *(int64_t *)s->field = iv;
        return 0;
    case CLI_INT:
        if (cli_parse_int(val, s->ilo, s->ihi, &iv) != 0 || iv < INT32_MIN || iv > INT32_MAX) {
            return -1;
        }
        *(int *)s->field = (int)iv;
        return 0;
    case CLI_DOUBLE:
        if (cli_parse_double(val, s->dlo, s->dhi, &dv) != 0) {
            return -1;
        }
        *(double *)s->field = dv;
        return 0;
    case CLI_SEED:
        if (cli_parse_int(val, 0, INT64_MAX, &iv) != 0) {
            return -1;
        }
        *(uint64_t *)s->field = (uint64_t)iv;
        return 0;
    case CLI_CHOICE:
        for (int k = s->first_choice; k < s->n_choices; k++) {
            if (strcmp(val, s->choices[k]) == 0) {
                *(int *)s->field = k;
                return 0;
            }
        }
        return -1;
    case CLI_TEXT:
        *(const char **)s->field = val;
        return 0;
    case CLI_CUSTOM:
        return s->parse(val, s->field);
    default:
        return -1;
    }
}

static int is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int cli_parse(const cli_program *p, int argc, char **argv)
{
    /* The defaults as they are before parsing, for --help. */
    char (*dflt)[256] = malloc((size_t)(p->n_specs > 0 ? p->n_specs : 1) * sizeof *dflt);
    if (dflt == NULL) {
        fprintf(stderr, "%s: out of memory\n", p->prog);
        return -1;
    }
    for (int k = 0; k < p->n_specs; k++) {
        value_text(&p->specs[k], dflt[k], sizeof dflt[k]);
    }
    int rc = 0;
    for (int i = 1; rc == 0 && i < argc; i++) {
        const char *arg = argv[i];
        if (is_help(arg)) {
            usage_with(p, dflt, stdout);
            rc = 1;
            break;
        }
        if (arg[0] != '-' && p->positional != NULL) {
            rc = p->positional(arg, p->ctx) == 0 ? 0 : -1;
            continue;
        }
        const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        const size_t len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
        const cli_spec *s = NULL;
        for (int k = 0; s == NULL && k < p->n_specs; k++) {
            if (p->specs[k].type != CLI_SECTION && cli_is_option(arg, len, p->specs[k].name)) {
                s = &p->specs[k];
            }
        }
        if (s == NULL) {
            fprintf(stderr, "%s: unknown option %s (%s--help lists the options)\n", p->prog, arg,
                    arg[0] != '-' || arg[1] == '\0'
                        ? "this program takes no other arguments; "
                        : "");
            rc = -1;
            break;
        }
        char range[512];
        cli_spec_range(s, range, sizeof range);
        if (s->type == CLI_FLAG) {
            if (eq != NULL) {
                fprintf(stderr, "%s: %s takes no value\n", p->prog, s->name);
                rc = -1;
                break;
            }
            *(int *)s->field = 1;
        } else {
            const char *val = eq != NULL ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
            if (val == NULL) {
                fprintf(stderr, "%s: %s needs a value (%s)\n", p->prog, s->name, range);
                rc = -1;
                break;
            }
            if (set_value(s, val) != 0) {
                fprintf(stderr, "%s: bad value '%s' for %s: expected %s\n", p->prog, val, s->name,
                        range);
                rc = -1;
                break;
            }
        }
        if (s->seen != NULL) {
            *s->seen = 1;
        }
    }
    free(dflt);
    return rc;
}
