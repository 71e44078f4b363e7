/*
 * Options as data. A handle (sampler, estimator) describes its options in
 * one table of ebm__option rows indexed by the option's enum value: name,
 * kind, accepted range, default, and the handle field the value goes to.
 * The functions here set an option from its table (the range check and its
 * message), read it back, and give a new handle its defaults. The tables
 * live beside their handles (sampler.c, estimator.c), where
 * python/tools/gen_options.py reads them to write the Python binding's
 * option metadata (python/ebm/_options.py) and docs/options.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_OPTIONS_H
#define EBM_OPTIONS_H

#include "error.h"

#include <stddef.h>
#include <stdint.h>

/* What an option takes. */
typedef enum ebm__option_kind {
    EBM__OPTION_INT,   /* an integer lo to hi (hi = INT64_MAX: lo or more) */
    EBM__OPTION_FLAG,  /* 0 or 1 (lo = 0, hi = 1) */
    EBM__OPTION_ENUM,  /* values of the header enum `values`, lo to hi, or those `range` names */
    EBM__OPTION_MASK,  /* a bit mask within lo to hi; the hook bounds it further */
    EBM__OPTION_DOUBLE /* a finite double > lo (open) or >= lo, and < hi if below */
} ebm__option_kind;

/* The C type of the handle field that holds an option. */
typedef enum ebm__field_type {
    EBM__FIELD_INT,
    EBM__FIELD_INT64,
    EBM__FIELD_UINT32,
    EBM__FIELD_DOUBLE
} ebm__field_type;

/* A check of an integer value already in lo to hi, against what the range
 * cannot say (the model's layers, the handle's kind); it may also act on an
 * accepted value before it is stored (a new chain count drops the chains).
 * Returns EBM_OK to accept, or a code with msg set to refuse (nothing
 * changed). */
typedef int (*ebm__option_hook)(void *handle, ebm__msg *msg, int64_t value);

/* One option. Unknown option numbers are rows with name NULL. */
typedef struct ebm__option {
    const char *name;           /* the C name: "EBM_SAMPLER_COUPLING" */
    ebm__option_kind kind;
    ebm__field_type type;       /* the field at `offset` in the handle */
    size_t offset;
    int64_t lo, hi;             /* accepted integers; DOUBLE: the bound lo */
    int open;                   /* DOUBLE: 1 for > lo, 0 for >= lo */
    int below;                  /* DOUBLE: 1 for < hi too (hi the upper bound), 0 for none */
    const char *range;          /* NULL (from lo and hi), or the values in words */
    const char *values;         /* ENUM: the header enum's tag ("ebm_coupling"); else NULL */
    double initial;             /* the default ebm__options_init stores */
    const char *initial_text;   /* NULL, or the default in words where the handle's create
                                 * sets one by its kind or model */
    ebm__option_hook hook;      /* NULL, or the check past the range */
} ebm__option;

/* A handle's table: `handle` names its setters (ebm_<handle>_set_int);
 * `numbered`: the refusal of a value out of range names the option by
 * number too (see ebm__option_out_of_range). */
typedef struct ebm__options {
    const char *handle;
    const ebm__option *rows;
    int count;
    int numbered;
} ebm__options;

/* The tables: sampler.c's and estimator.c's. */
extern const ebm__options ebm__sampler_options;
extern const ebm__options ebm__estimator_options;

/* The row of `option`, or NULL if the table has none. */
const ebm__option *ebm__option_find(const ebm__options *t, int option);

/* Set an integer option of handle h: EBM_OK and the value stored, or
 * EBM_EVALUE (unknown option, a double option, out of range) or the hook's
 * code, with the message in slot and nothing changed. */
int ebm__option_set_int(const ebm__options *t, void *h, char *slot, int option, int64_t value);

/* Set a double option of handle h; as ebm__option_set_int. */
int ebm__option_set_double(const ebm__options *t, void *h, char *slot, int option,
                           double value);

/* The value of an option of h into *out (an integer option as a double is
 * exact up to 2^53; ebm__option_get_int reads integers exactly). Returns
 * EBM_OK, or EBM_EVALUE for an unknown option (or a double option read by
 * ebm__option_get_int); *out is unchanged then. */
int ebm__option_get_int(const ebm__options *t, const void *h, int option, int64_t *out);
int ebm__option_get_double(const ebm__options *t, const void *h, int option, double *out);

/* Store every option's `initial` in h: a new handle's defaults, before its
 * create sets those that depend on its kind or model. */
void ebm__options_init(const ebm__options *t, void *h);

/* The range of o in words into buf ("1 to 1000000", "0 or more", "0 or 1",
 * or o->range). */
void ebm__option_range_text(const ebm__option *o, char *buf, size_t size);

/* EBM_EVALUE with the message that refuses `value` for option `option` of
 * table t: "option <number> (<name>): value <value> is out of range; it
 * takes <range>" for a numbered table, else "<name> is <value>; it takes
 * <range>", where an enum option whose range is numbers names its enum
 * ("<name> (enum <tag>)"). */
int ebm__option_out_of_range(const ebm__options *t, int option, ebm__msg *msg, int64_t value);

#endif /* EBM_OPTIONS_H */
