/* Helpers shared by the example programs: see cli.h. */
#include "cli.h"

#include <ebm.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int cli_next_option(int argc, char **argv, int *i, size_t *len, const char **val)
{
    const char *arg = argv[*i], *eq = strchr(arg, '=');
    *len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
    *val = NULL;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        return 1;
    }
    *val = eq != NULL ? eq + 1 : *i + 1 < argc ? argv[++*i] : NULL;
    return *val != NULL ? 0 : -1;
}

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

int cli_option(int argc, char **argv, int *i, size_t *len, const char **val, const char *prog,
               void (*usage)(FILE *))
{
    const char *arg = argv[*i];
    int rc = cli_next_option(argc, argv, i, len, val);
    if (rc == 1) {
        usage(stdout);
        exit(0);
    }
    if (rc != 0) {
        fprintf(stderr, "%s: %s needs a value\n", prog, arg);
        return -1;
    }
    return 0;
}

int cli_unknown_option(const char *prog, const char *arg, void (*usage)(FILE *))
{
    fprintf(stderr, "%s: unknown option %s\n", prog, arg);
    usage(stderr);
    return -1;
}

int cli_bad_value(const char *prog, const char *arg, size_t len, const char *val)
{
    fprintf(stderr, "%s: bad value '%s' for %.*s\n", prog, val, (int)len, arg);
    return -1;
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
