/* Small helpers shared by the example programs: parsing option values, a
 * table-driven command-line parser whose table also writes --help, a
 * monotonic clock, durations for progress lines, and mkdir -p. Nothing here
 * prints or exits, except cli_parse, cli_usage and the program-level helpers
 * at the end, which say so.
 */
#ifndef EXAMPLES_COMMON_CLI_H
#define EXAMPLES_COMMON_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
/** A CLI_CUSTOM parser of a step that may be off (--average-from): "off"
 *  gives -1, else an integer in 0..2^50 goes to *(int64_t *)field.
 *  @return 0, or -1 (nothing written) */
int cli_parse_step_or_off(const char *val, void *field);
/** Seconds on a monotonic clock (only differences mean anything). */
double cli_now(void);
/** A duration for humans: "850 ms", "42.3 s", "12m05s", "3h02m"; "?" if not finite. */
void cli_format_duration(double seconds, char *buf, size_t size);
/** mkdir -p. @return 0, or -1 with errno set */
int cli_make_dirs(const char *path);
/** Opens the regular file path for reading, as the library's loader does:
 * without blocking (a FIFO with no writer, a device or a directory is
 * refused at once), then checked by fstat; the descriptor is blocking and
 * close-on-exec. @return the descriptor, with its size in *size, or -1 with
 * a message naming path and what is wrong in err (errno set). */
int cli_open_file(const char *path, size_t *size, char *err, size_t err_size);
/** What cli_open_log returns besides 0. */
enum { CLI_LOG_EIO = 1, CLI_LOG_OTHER_COLUMNS = 2 };
/** Opens a run's CSV log (one header line, then rows that start with their
 * step, in step order). With resume_step < 0 the file is written anew and
 * header written. Else the run resumes a checkpoint of that step: an
 * existing file must start with header (else CLI_LOG_OTHER_COLUMNS, the
 * message showing both and ending with hint), and its rows of later steps
 * and a line cut short (no newline), which a run killed after that
 * checkpoint left, are cut off; the stream appends. Read with cli_open_file's checks.
 * @return 0 with the stream in *out, or a CLI_LOG_ code with a message naming
 * path in err (nothing opened) */
int cli_open_log(FILE **out, const char *path, const char *header, int64_t resume_step,
                 const char *hint, char *err, size_t err_size);
/** printf into a caller's message buffer (NULL or size 0: nothing is written). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void cli_set_error(char *buf, size_t size, const char *fmt, ...);

/* ---- option tables: parsing, --help and messages from one description --- */

/** What an option takes (cli_spec.type). */
enum cli_type {
    CLI_SECTION = 0, /* not an option: a heading line in --help ("data:") */
    CLI_INT64,       /* int64_t *field, in [ilo, ihi] */
    CLI_INT,         /* int *field, in [ilo, ihi] (within int's range) */
    CLI_DOUBLE,      /* double *field, finite, in [dlo, dhi] */
    CLI_SEED,        /* uint64_t *field, 0 .. INT64_MAX */
    CLI_CHOICE,      /* int *field = the index of the value in choices[first..n) */
    CLI_TEXT,        /* const char **field = the value (a path, a list) */
    CLI_FLAG,        /* int *field = 1; takes no value */
    CLI_CUSTOM       /* parse(value, field) returns 0 or -1; range says what it takes */
};

/**
 * One option of a program. --help prints, for each, its name and meta, the
 * help text, the range it accepts and its default (the field's value before
 * parsing, or dflt); a bad value's message names the same range. So the
 * accepted values, --help and the messages cannot disagree.
 */
typedef struct cli_spec {
    int type;                    /* enum cli_type */
    const char *name;            /* "--batch" (CLI_SECTION: the heading) */
    const char *meta;            /* "N", "X", "DIR"; NULL for CLI_FLAG */
    void *field;                 /* where the value goes (see enum cli_type) */
    int64_t ilo, ihi;            /* CLI_INT64, CLI_INT */
    double dlo, dhi;             /* CLI_DOUBLE */
    const char *const *choices;  /* CLI_CHOICE: the names, */
    int n_choices, first_choice; /* of which choices[first_choice..n_choices) are accepted */
    int (*parse)(const char *val, void *field); /* CLI_CUSTOM */
    const char *range;           /* NULL, or what the option accepts, overriding the derived text */
    const char *dflt;            /* NULL, or the default as text (else the field's value) */
    const char *help;            /* one sentence, no final period */
    int *seen;                   /* NULL, or set to 1 when the option is given */
} cli_spec;

/* Shorthands for the common kinds (designated initialisers, C99). */
#define CLI_HEAD(title) {.type = CLI_SECTION, .name = (title)}
#define CLI_I64(nm, mt, fld, lo, hi, hlp) \
    {.type = CLI_INT64, .name = (nm), .meta = (mt), .field = (fld), .ilo = (lo), .ihi = (hi), \
     .help = (hlp)}
#define CLI_I32(nm, mt, fld, lo, hi, hlp) \
    {.type = CLI_INT, .name = (nm), .meta = (mt), .field = (fld), .ilo = (lo), .ihi = (hi), \
     .help = (hlp)}
#define CLI_DBL(nm, mt, fld, lo, hi, hlp) \
    {.type = CLI_DOUBLE, .name = (nm), .meta = (mt), .field = (fld), .dlo = (lo), .dhi = (hi), \
     .help = (hlp)}
#define CLI_STR(nm, mt, fld, hlp) \
    {.type = CLI_TEXT, .name = (nm), .meta = (mt), .field = (fld), .help = (hlp)}
#define CLI_ONE_OF(nm, fld, names, first, hlp) \
    {.type = CLI_CHOICE, .name = (nm), .field = (fld), .choices = (names), \
     .n_choices = (int)(sizeof(names) / sizeof(names)[0]), .first_choice = (first), .help = (hlp)}

/** A program's command line: its options, and the text around them in --help. */
typedef struct cli_program {
    const char *prog;      /* "train_ucd" */
    const char *synopsis;  /* after the name in the usage line: "[options]" */
    const char *about;     /* NULL, or lines after the usage line (each ending in \n) */
    const cli_spec *specs;
    int n_specs;
    const char *epilog;    /* NULL, or lines after the options */
    /* NULL, or a handler of arguments that do not start with '-' (plot_curves'
     * LABEL=FILE): returns 0, or -1 after printing a message. Without one, such
     * an argument is an error ("unknown option"). */
    int (*positional)(const char *arg, void *ctx);
    void *ctx;
} cli_program;

/**
 * Parse argv[1..argc) by p's table: "--name value", "--name=value", flags,
 * --help and -h (anywhere an option may stand). Every message goes to
 * stderr, one line, prefixed "<prog>: ":
 *   an argument that is no option of the table, or a stray positional one:
 *     "unknown option <arg> (--help lists the options)";
 *   a missing value: "<name> needs a value (<range>)";
 *   a bad value: "bad value '<v>' for <name>: expected <range>".
 * The name is checked before any value is taken, so a misspelt last option
 * is reported as unknown, not as lacking a value.
 * @return 0, 1 after printing the usage to stdout (--help), or -1 after a message
 */
int cli_parse(const cli_program *p, int argc, char **argv);

/**
 * The usage of p: the usage line, about, then one entry per option (name,
 * meta, help; what it accepts; the default), wrapped to 79 columns, and
 * epilog. Defaults are the fields' current values (or dflt).
 */
void cli_usage(const cli_program *p, FILE *f);

/** What s accepts, as the messages say it: "an integer in 1..4096", "an
 *  integer >= 1", "a number with 0 < X <= 1e+06", "one of binary, spin"
 *  (--help shows the part after "in" / "with"); written to buf (truncated to
 *  size). An upper bound of 2^40 or more (1e9 or more for a number) only
 *  keeps sizes countable and is not shown; a number's lower bound in (0,
 *  1e-9] shows as "> 0". */
void cli_spec_range(const cli_spec *s, char *buf, size_t size);

/* ---- stopping on a signal ----------------------------------------------- */

/**
 * Catch SIGINT and SIGTERM with sigaction. The handler only records the
 * signal's number in a volatile sig_atomic_t, which a training loop reads
 * between steps (cli_stop_signal) to finish the step in progress, write its
 * checkpoint and exit with 128 + the number. A second signal of the same kind
 * ends the program at once (SA_RESETHAND): the last complete checkpoint stays,
 * since checkpoints are written atomically. Interrupted system calls restart
 * (SA_RESTART). A disposition of SIG_IGN inherited from the parent (a
 * background job of a shell without job control) is replaced as well.
 * @return 0, or -1 with errno set
 */
int cli_catch_stop_signals(void);
/** The first signal caught since cli_catch_stop_signals (SIGINT, SIGTERM), or 0. */
int cli_stop_signal(void);
/** "SIGINT", "SIGTERM", or "signal" for any other. */
const char *cli_signal_name(int sig);

/* ---- program-level helpers: these print and may exit -------------------- */

/** Print "<prog>: <what> failed: <ERROR_NAME> (<msg>)" to stderr and exit(1). */
void cli_die(const char *prog, const char *what, int rc, const char *msg);
/** malloc that never returns NULL (cli_die on failure); size 0 gives a valid pointer. */
void *cli_xmalloc(const char *prog, size_t size);

#endif
