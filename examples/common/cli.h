/* Small helpers shared by the example programs: parsing option values, a
 * monotonic clock, durations for progress lines, and mkdir -p. Nothing here
 * prints or exits, except the program-level helpers at the end, which say
 * so.
 */
#ifndef EXAMPLES_COMMON_CLI_H
#define EXAMPLES_COMMON_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/**
 * Take the next option from argv, as "--name=value" or "--name value".
 * @param[in,out] i    index of the option in argv; moved past its value
 * @param[out]    len  length of the option's name (up to any '=')
 * @param[out]    val  its value; NULL for --help and -h, which take none
 * @return 0, 1 for --help or -h, or -1 if the value is missing
 */
int cli_next_option(int argc, char **argv, int *i, size_t *len, const char **val);
/** @return 1 if the first len characters of arg are exactly name, else 0 */
int cli_is_option(const char *arg, size_t len, const char *name);
/**
 * Mark in use[0..n_names) the names found in a comma-separated list.
 * @param[out] bad on failure, the unknown entry (truncated to bad_size)
 * @return the number of distinct names marked, or -1 for an unknown entry
 *         (use is then partly written)
 */
int cli_parse_names(const char *list, const char *const *names, int n_names, int *use, char *bad,
                    size_t bad_size);
/** Parse all of s as a base-10 integer in [lo, hi]. @return 0, or -1 (nothing
 *  written to *out) */
int cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);
/** Parse all of s as a finite double in [lo, hi]. @return 0, or -1 */
int cli_parse_double(const char *s, double lo, double hi, double *out);
/** Seconds on a monotonic clock (only differences mean anything). */
double cli_now(void);
/** A duration for humans: "850 ms", "42.3 s", "12m05s", "3h02m"; "?" if not finite. */
void cli_format_duration(double seconds, char *buf, size_t size);
/** mkdir -p. @return 0, or -1 with errno set */
int cli_make_dirs(const char *path);
/** printf into a caller's message buffer (NULL or size 0: nothing is written). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void cli_set_error(char *buf, size_t size, const char *fmt, ...);

/* ---- program-level helpers: these print and may exit -------------------- */

/**
 * cli_next_option for a program's option loop: --help and -h print usage to
 * stdout and exit(0); a missing value prints "<prog>: <option> needs a
 * value" to stderr.
 * @return 0, or -1 if the value is missing
 */
int cli_option(int argc, char **argv, int *i, size_t *len, const char **val, const char *prog,
               void (*usage)(FILE *));
/** The end of an option loop: "<prog>: unknown option <arg>" and the usage to
 *  stderr. @return -1 */
int cli_unknown_option(const char *prog, const char *arg, void (*usage)(FILE *));
/** "<prog>: bad value '<val>' for <option>" (the first len characters of arg)
 *  to stderr. @return -1 */
int cli_bad_value(const char *prog, const char *arg, size_t len, const char *val);
/** Print "<prog>: <what> failed: <ERROR_NAME> (<msg>)" to stderr and exit(1). */
void cli_die(const char *prog, const char *what, int rc, const char *msg);
/** malloc that never returns NULL (cli_die on failure); size 0 gives a valid pointer. */
void *cli_xmalloc(const char *prog, size_t size);

#endif
