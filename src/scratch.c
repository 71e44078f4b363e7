/* Scratch buffers kept between calls (scratch.h). */
#include "scratch.h"

#include <stdlib.h>

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

float *ebm__scratch_floats(ebm__scratch *s, size_t n)
{
    return ebm__grow((void **)&s->f, &s->fcap, n, sizeof *s->f);
}

double *ebm__scratch_doubles(ebm__scratch *s, size_t n)
{
    return ebm__grow((void **)&s->d, &s->dcap, n, sizeof *s->d);
}

int64_t *ebm__scratch_indices(ebm__scratch *s, size_t n)
{
    return ebm__grow((void **)&s->i, &s->icap, n, sizeof *s->i);
}

void ebm__scratch_free(ebm__scratch *s)
{
    free(s->f);
    free(s->d);
    free(s->i);
    s->f = NULL;
    s->d = NULL;
    s->i = NULL;
    s->fcap = s->dcap = s->icap = 0;
}
