/* Options as data: setting, reading and initialising a handle's options
 * from its table (options.h), with one wording for every refusal. */
#include "options.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const ebm__option *ebm__option_find(const ebm__options *t, int option)
{
    if (option < 0 || option >= t->count || t->rows[option].name == NULL) {
        return NULL;
    }
    return &t->rows[option];
}

void ebm__option_range_text(const ebm__option *o, char *buf, size_t size)
{
    if (o->range != NULL) {
        snprintf(buf, size, "%s", o->range);
    } else if (o->kind == EBM__OPTION_FLAG) {
        snprintf(buf, size, "0 or 1");
    } else if (o->hi == INT64_MAX) {
        snprintf(buf, size, "%" PRId64 " or more", o->lo);
    } else {
        snprintf(buf, size, "%" PRId64 " to %" PRId64, o->lo, o->hi);
    }
}

int ebm__option_out_of_range(const ebm__options *t, int option, ebm__msg *msg, int64_t value)
{
    const ebm__option *o = &t->rows[option];
    char range[EBM__MSG_SIZE];
    ebm__option_range_text(o, range, sizeof range);
    if (t->numbered) {
        return ebm__fail(msg, EBM_EVALUE,
                         "option %d (%s): value %" PRId64 " is out of range; it takes %s", option,
                         o->name, value, range);
    }
    const int tag = o->kind == EBM__OPTION_ENUM && o->range == NULL;
    return ebm__fail(msg, EBM_EVALUE, "%s%s%s%s is %" PRId64 "; it takes %s", o->name,
                     tag ? " (enum " : "", tag ? o->values : "", tag ? ")" : "", value, range);
}

/* The field of o in handle h. */
static void *field(const ebm__option *o, const void *h)
{
    return (char *)(uintptr_t)h + o->offset;
}

/* Store an integer in o's field of h (in range: it fits the field). */
static void store_int(const ebm__option *o, void *h, int64_t value)
{
    void *f = field(o, h);
    switch (o->type) {
    case EBM__FIELD_INT: *(int *)f = (int)value; break;
    case EBM__FIELD_UINT32: *(uint32_t *)f = (uint32_t)value; break;
    case EBM__FIELD_DOUBLE: *(double *)f = (double)value; break;
    default: *(int64_t *)f = value; break;
    }
}

int ebm__option_set_int(const ebm__options *t, void *h, char *slot, int option, int64_t value)
{
    const ebm__option *o = ebm__option_find(t, option);
    if (o == NULL) {
        return ebm__error(slot, EBM_EVALUE, "option %d is unknown", option);
    }
    if (o->kind == EBM__OPTION_DOUBLE) {
        return ebm__error(slot, EBM_EVALUE, "option %d (%s) takes a double: use ebm_%s_set_double",
                          option, o->name, t->handle);
    }
    ebm__msg msg;
    int rc = value < o->lo || value > o->hi ? ebm__option_out_of_range(t, option, &msg, value)
                                            : EBM_OK;
    if (rc == EBM_OK && o->hook != NULL) {
        rc = o->hook(h, &msg, value);
    }
    if (rc != EBM_OK) {
        return ebm__set_message(slot, rc, &msg);
    }
    store_int(o, h, value);
    return EBM_OK;
}

int ebm__option_set_double(const ebm__options *t, void *h, char *slot, int option, double value)
{
    const ebm__option *o = ebm__option_find(t, option);
    if (o == NULL) {
        return ebm__error(slot, EBM_EVALUE, "option %d is unknown", option);
    }
    if (o->kind != EBM__OPTION_DOUBLE) {
        return ebm__error(slot, EBM_EVALUE, "option %d (%s) is not a double option", option,
                          o->name);
    }
    const double lo = (double)o->lo, hi = (double)o->hi;
    if (!isfinite(value) || (o->open ? !(value > lo) : !(value >= lo))) {
        return ebm__error(slot, EBM_EVALUE, "%s is %g; it must be finite and %s %g", o->name,
                          value, o->open ? ">" : ">=", lo);
    }
    if (o->below && !(value < hi)) {
        return ebm__error(slot, EBM_EVALUE, "%s is %g; it must be %s %g and < %g", o->name, value,
                          o->open ? ">" : ">=", lo, hi);
    }
    *(double *)field(o, h) = value;
    return EBM_OK;
}

int ebm__option_get_int(const ebm__options *t, const void *h, int option, int64_t *out)
{
    const ebm__option *o = ebm__option_find(t, option);
    if (o == NULL || o->type == EBM__FIELD_DOUBLE) {
        return EBM_EVALUE;
    }
    const void *f = field(o, h);
    *out = o->type == EBM__FIELD_INT      ? *(const int *)f
           : o->type == EBM__FIELD_UINT32 ? (int64_t) * (const uint32_t *)f
                                          : *(const int64_t *)f;
    return EBM_OK;
}

int ebm__option_get_double(const ebm__options *t, const void *h, int option, double *out)
{
    const ebm__option *o = ebm__option_find(t, option);
    if (o == NULL) {
        return EBM_EVALUE;
    }
    int64_t v;
    if (o->type == EBM__FIELD_DOUBLE) {
        *out = *(const double *)field(o, h);
    } else if (ebm__option_get_int(t, h, option, &v) == EBM_OK) {
        *out = (double)v;
    }
    return EBM_OK;
}

void ebm__options_init(const ebm__options *t, void *h)
{
    for (int i = 0; i < t->count; i++) {
        const ebm__option *o = &t->rows[i];
        if (o->name == NULL) {
            continue;
        }
        if (o->type == EBM__FIELD_DOUBLE) {
            *(double *)field(o, h) = o->initial;
        } else {
            store_int(o, h, (int64_t)o->initial);
        }
    }
}
