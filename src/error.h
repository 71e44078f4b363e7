/*
 * Internal errors: the message a failing call builds, and checked sizes.
 * Internal non-static symbols are named ebm__name; none is exported.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_ERROR_H
#define EBM_ERROR_H

#include "ebm.h"

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define EBM__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define EBM__PRINTF(a, b)
#endif


#define EBM__MSG_SIZE 512

/* A message being built by a call; the public entry point decides where it
 * goes (the model's slot, a handle's slot, a caller buffer). */
typedef struct ebm__msg {
    char text[EBM__MSG_SIZE];
} ebm__msg;

/* Format the message into msg (if not NULL) and return code. */
int ebm__fail(ebm__msg *msg, int code, const char *fmt, ...) EBM__PRINTF(3, 4);
/* EBM_EVALUE: in `what`, a layer input or a result overflowed float (the
 * parameters are too large); the call changed nothing. */
int ebm__fail_overflow(ebm__msg *msg, const char *what);
/* Store msg in a handle's message slot (EBM__MSG_SIZE bytes) and return
 * code: how a public call on a sampler, an estimator or a generator ends
 * when it fails (a model's slot is guarded: ebm__model_set_error). */
int ebm__set_message(char *slot, int code, const ebm__msg *msg);
/* Format the message straight into a handle's message slot (EBM__MSG_SIZE
 * bytes) and return code: a failure found at the public call itself, in
 * one line. The arguments may include the slot's own text. */
int ebm__error(char *slot, int code, const char *fmt, ...) EBM__PRINTF(3, 4);
/* Return expr's code from the enclosing function unless it is EBM_OK. */
#define EBM__PROPAGATE(expr)                                                                    \
    do {                                                                                        \
        const int propagated_ = (expr);                                                         \
        if (propagated_ != EBM_OK) {                                                            \
            return propagated_;                                                                 \
        }                                                                                       \
    } while (0)
/* Copy text into a caller buffer (NULL or size 0: nothing). */
void ebm__copy_text(char *buf, size_t size, const char *text);



/* Largest value passed to BLAS as an int. */
#define EBM__BLAS_MAX 2147483647LL

/* a * b into *out unless it overflows int64 or is negative. Returns 0 on success. */
int ebm__mul_overflow(int64_t a, int64_t b, int64_t *out);

#endif /* EBM_ERROR_H */
