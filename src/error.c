/* Result codes, their texts, and the message helpers. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *ebm_strerror(int code)
{
    switch (code) {
    case EBM_OK: return "success";
    case EBM_ENULL: return "a required pointer argument is NULL";
    case EBM_ESHAPE: return "a size, stride or layer index is wrong";
    case EBM_EVALUE: return "a value is outside its domain";
    case EBM_ENOMEM: return "out of memory";
    case EBM_EIO: return "a file could not be read or written";
    case EBM_EFORMAT: return "not a valid model file";
    case EBM_EUNSUPPORTED: return "operation not defined for this model";
    case EBM_ELIMIT: return "a size limit was exceeded";
    case EBM_EINTERNAL: return "internal error in libebm";
    default: return "unknown result code";
    }
}

const char *ebm_error_name(int code)
{
    switch (code) {
    case EBM_OK: return "EBM_OK";
    case EBM_ENULL: return "EBM_ENULL";
    case EBM_ESHAPE: return "EBM_ESHAPE";
    case EBM_EVALUE: return "EBM_EVALUE";
    case EBM_ENOMEM: return "EBM_ENOMEM";
    case EBM_EIO: return "EBM_EIO";
    case EBM_EFORMAT: return "EBM_EFORMAT";
    case EBM_EUNSUPPORTED: return "EBM_EUNSUPPORTED";
    case EBM_ELIMIT: return "EBM_ELIMIT";
    case EBM_EINTERNAL: return "EBM_EINTERNAL";
    default: return "EBM_UNKNOWN";
    }
}

int ebm__fail(ebm__msg *msg, int code, const char *fmt, ...)
{
    if (msg != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg->text, sizeof msg->text, fmt, ap);
        va_end(ap);
    }
    return code;
}

void ebm__copy_text(char *buf, size_t size, const char *text)
{
    if (buf == NULL || size == 0) {
        return;
    }
    size_t len = strlen(text);
    if (len >= size) {
        len = size - 1;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
}

int ebm__mul_overflow(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0) {
        return 1;
    }
    if (a != 0 && b > INT64_MAX / a) {
        return 1;
    }
    *out = a * b;
    return 0;
}

int ebm__fail_overflow(ebm__msg *msg, const char *what)
{
    return ebm__fail(msg, EBM_EVALUE,
                     "%s: a layer input or a result is not finite (it overflowed float: the "
                     "parameters are too large); nothing was changed",
                     what);
}

int ebm__set_message(char *slot, int code, const ebm__msg *msg)
{
    ebm__copy_text(slot, EBM__MSG_SIZE, msg->text);
    return code;
}

int ebm__error(char *slot, int code, const char *fmt, ...)
{
    ebm__msg msg; /* formatted apart: an argument may be the slot's text */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg.text, sizeof msg.text, fmt, ap);
    va_end(ap);
    return ebm__set_message(slot, code, &msg);
}
