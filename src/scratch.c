/* Scratch memory kept between calls (scratch.h). */
#include "scratch.h"

#include <stdint.h>
#include <stdlib.h>

#define ALIGN 64

void *ebm__arena_take(ebm__arena *a, size_t count, size_t elem)
{
    if (a->measuring) { /* room for the piece and its alignment */
        const size_t room = SIZE_MAX - a->used;
        if (elem > 0 && (count > (room - (ALIGN - 1)) / elem || room < ALIGN)) {
            a->overflow = 1;
            return NULL;
        }
        a->used += (ALIGN - 1) + count * elem;
        return NULL;
    }
    const uintptr_t at = ((uintptr_t)(a->base + a->used) + (ALIGN - 1)) & ~(uintptr_t)(ALIGN - 1);
    unsigned char *piece = a->base + (at - (uintptr_t)a->base);
    a->used = (size_t)(piece - a->base) + count * elem;
    return piece;
}

int ebm__arena_layout(ebm__arena *a, void (*layout)(ebm__arena *a, void *ctx), void *ctx)
{
    a->measuring = 1;
    a->overflow = 0;
    a->used = 0;
    layout(a, ctx);
    a->measuring = 0;
    const size_t need = a->used > 0 ? a->used : 1;
    if (a->overflow) {
        return -1;
    }
    if (need > a->cap) {
        const size_t want = need <= SIZE_MAX / 3 * 2 ? need + need / 2 : need;
        unsigned char *p = realloc(a->base, want);
        if (p == NULL) {
            return -1;
        }
        a->base = p;
        a->cap = want;
    }
    a->used = 0;
    layout(a, ctx);
    return 0;
}

void ebm__arena_free(ebm__arena *a)
{
    free(a->base);
    a->base = NULL;
    a->cap = a->used = 0;
}

void *ebm__grow(void **buf, size_t *cap, size_t n, size_t elem)
{
    n = n > 0 ? n : 1;
    if (n > *cap) {
        size_t want = n + n / 2;
        void *p = realloc(*buf, want * elem);
        if (p == NULL) {
            return NULL;
        }
        *buf = p;
        *cap = want;
    }
    return *buf;
}
