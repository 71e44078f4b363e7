/*
 * The generator's inside (rng.c): streams of batched calls, marks that undo
 * a failed call's draws.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_RNG_H
#define EBM_RNG_H

#include "ebm.h"
#include "error.h"

#include <stdint.h>

/* Philox4x32-10: out = philox(ctr, key). */
void ebm__philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
uint64_t ebm__splitmix64(uint64_t *state);

struct ebm_rng {
    uint64_t key;       /* Philox key: low word key[0], high word key[1] */
    uint64_t seq;       /* sequence number: counter words 2 and 3 */
    uint64_t pos;       /* next 32-bit word of sequence seq used by the fills */
    int has_spare;      /* a spare normal from the last Box-Muller pair */
    double spare;
    char errmsg[EBM__MSG_SIZE];
};

/*
 * A batched call takes one sequence number and draws row r's numbers from
 * counters (block, r, seq): they depend on neither n nor other rows. The
 * counter words are ctr = {block, row, seq low, seq high}.
 */
typedef struct ebm__stream {
    uint32_t key[2];
    uint64_t seq;
} ebm__stream;

/* The child generator number `index` of parent, as ebm_rng_derive makes it,
 * into caller storage (no allocation). */
void ebm__rng_child(const ebm_rng_t *parent, uint64_t index, ebm_rng_t *child);
/* Take a fresh sequence number from r for one batched call. */
ebm__stream ebm__rng_take_stream(ebm_rng_t *r);
/* A generator's position, saved at the start of a call that moves it and
 * put back if the call fails (a failed call changes nothing). */
typedef struct ebm__rng_mark {
    uint64_t seq, pos;
    int has_spare;
    double spare;
} ebm__rng_mark;
ebm__rng_mark ebm__rng_save(const ebm_rng_t *r);
void ebm__rng_restore(ebm_rng_t *r, const ebm__rng_mark *mark);
/* Take count fresh streams from rng, as count calls of the above would (a
 * fixed number per call, whatever the data, so that row r's draws never
 * depend on other rows). */
void ebm__rng_take_streams(ebm_rng_t *rng, int count, ebm__stream *out);
/* out[0..count) = uniforms in [0,1) of row `row`, starting at 32-bit word
 * `word` of that row's part of the stream. */
void ebm__stream_uniform(const ebm__stream *s, uint32_t row, uint64_t word, int64_t count,
                         float *out);
/* The same for n rows: out + r ldo gets ebm__stream_uniform(s,
 * ebm__row_id(rows, r), word, count). Rows of at most EBM__SHORT_ROW words
 * share vector work; longer ones are filled one by one. */
#define EBM__SHORT_ROW 64
void ebm__stream_uniform_rows(const ebm__stream *s, int64_t n, const int64_t *rows,
                              uint64_t word, int64_t count, float *out, int64_t ldo);
/* out[0..count) = standard normals of row `row`, made in Box-Muller pairs:
 * pair j uses words word + 4j .. word + 4j + 3 (two 53-bit uniforms) and
 * gives normals 2j (cosine) and 2j + 1 (sine); an odd count drops the last
 * sine. */
void ebm__stream_normal(const ebm__stream *s, uint32_t row, uint64_t word, int64_t count,
                        float *out);
/* out[0..3] = the 32-bit words word .. word + 3 of row `row` (word a
 * multiple of 4: one Philox block). */
void ebm__stream_block(const ebm__stream *s, uint32_t row, uint64_t word, uint32_t out[4]);
/* A stream for try k >= 1 of a rejection loop that started on stream base:
 * a sequence of its own, so loops never run out of numbers. */
ebm__stream ebm__stream_for_try(const ebm__stream *base, uint64_t k);
/* A uniform in [0,1) from one 32-bit word. */
static inline float ebm__u32_to_float(uint32_t w) { return (float)(w >> 8) * 0x1.0p-24f; }
/* Stream row of work row r. */
static inline uint32_t ebm__row_id(const int64_t *rows, int64_t r)
{
    return (uint32_t)(rows == NULL ? r : rows[r]);
}

#endif /* EBM_RNG_H */
