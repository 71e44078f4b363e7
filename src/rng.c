/*
 * The random-number generator: Philox4x32-10 (Salmon et al. 2011, "Parallel
 * random numbers: as easy as 1, 2, 3") keyed by splitmix64.
 *
 * A generator is a 64-bit key and a 64-bit sequence number. Every random word
 * is one of the four outputs of philox(ctr, key) with
 *   ctr = {c0, c1, seq low 32 bits, seq high 32 bits}.
 * Two users of a sequence number lay out (c0, c1) differently:
 *  - the public fills (ebm_rng_uniform, ebm_rng_normal) read the sequence as
 *    one long run of words: word pos is word pos % 4 of block b = pos / 4,
 *    with c0 = low 32 bits of b and c1 = high 32 bits;
 *  - a batched library call (ebm__stream_*) gives row r the words of blocks
 *    c0 = 0, 1, 2, ... with c1 = r, so that row r's numbers depend only on
 *    (key, seq, r, unit), never on the batch size or on other rows.
 * The two layouts overlap, so a sequence number is used by one of them only
 * (ebm__rng_take_stream). Both name a word by a 64-bit block index (c0 low,
 * c1 high) and a word within the block: block pos / 4 for the fills, block
 * r * 2^32 + word / 4 for row r. So one pair of loops below serves both, and
 * a row holds 2^34 words (a larger word would carry into the next row).
 *
 * SPDX-License-Identifier: MIT
 */
#include "error.h"
#include "philox.h"
#include "rng.h"
#include "kernels.h"
#include "numerics.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void ebm__philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    ebm__philox_block(ctr[0], ctr[1], ctr[2], ctr[3], key[0], key[1], out);
}

/* Block `block` (64-bit: c0 low, c1 high) of sequence `seq`. */
static inline void sequence_block(const uint32_t key[2], uint64_t seq, uint64_t block,
                                  uint32_t out[4])
{
    ebm__philox_block((uint32_t)block, (uint32_t)(block >> 32), (uint32_t)seq, (uint32_t)(seq >> 32),
                 key[0], key[1], out);
}

/* ---- splitmix64 and key derivation ---------------------------------------- */

uint64_t ebm__splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* splitmix64's output for state x: a bijection of the 64-bit words, so that
 * mixing one input at a time never merges two values of that input. */
static uint64_t mix64(uint64_t x) { return ebm__splitmix64(&x); }

/* Domain constants (fractional bits of sqrt 2 and sqrt 3, as in SHA-512).
 * Without the first, mix64(seed) ^ mix64(stream) would be symmetric: (a, b)
 * and (b, a) would share a key, and so would every (s, s). The second keeps
 * children apart from created keys. */
#define RNG_STREAM_DOMAIN 0x6a09e667f3bcc908ULL
#define RNG_DERIVE_DOMAIN 0xbb67ae8584caa73bULL

/* The tag of a saved state: "EBMRNG", format 1. */
#define RNG_STATE_TAG 0x45424d524e470001ULL

static void split_key(uint64_t key, uint32_t out[2])
{
    out[0] = (uint32_t)key;
    out[1] = (uint32_t)(key >> 32);
}

/* ---- the two loops: uniforms and Box-Muller pairs ------------------------ */

/* out[0..count) = uniforms from the words of sequence seq that start at word
 * `first` (0..3) of block `block`. */
static void uniform_words(const uint32_t key[2], uint64_t seq, uint64_t block, unsigned first,
                          int64_t count, float *out)
{
    uint32_t w[4];
    int64_t i = 0;
    if (first != 0 && count > 0) {
        sequence_block(key, seq, block++, w);
        for (unsigned k = first; k < 4 && i < count; k++) {
            out[i++] = ebm__u32_to_float(w[k]);
        }
    }
    if (count - i >= 4) {
        int64_t nblocks = (count - i) / 4; /* whole blocks: the vectorised kernel */
        ebm__kern()->uniform(key, seq, block, nblocks, out + i);
        block += (uint64_t)nblocks;
        i += 4 * nblocks;
    }
    if (i < count) {
        sequence_block(key, seq, block, w);
        for (unsigned k = 0; i < count; k++) {
            out[i++] = ebm__u32_to_float(w[k]);
        }
    }
}

/*
 * out[0..count) = standard normals from the words of sequence seq that start
 * at word `first` (0..3) of block `block`: Box-Muller pair j takes words
 * 4j .. 4j + 3 from there (ebm__box_muller: u1 in (0,1] from the first two,
 * u2 in [0,1) from the last two, z0 = r cos(2 pi u2), z1 = r sin(2 pi u2),
 * r = sqrt(-2 log u1)). If count is odd the last pair's sine is not stored
 * but returned (the fills keep it as their spare); otherwise 0 is returned.
 * Aligned pairs (first == 0) come from the vectorised kernel.
 */
static double normal_words(const uint32_t key[2], uint64_t seq, uint64_t block, unsigned first,
                           int64_t count, float *out)
{
    float pair[2];
    if (first == 0) {
        int64_t whole = count / 2;
        ebm__kern()->normal(key, seq, block, whole, out);
        if (count % 2 == 0) {
            return 0.0;
        }
        ebm__kern()->normal(key, seq, block + (uint64_t)whole, 1, pair);
        out[count - 1] = pair[0];
        return pair[1];
    }
    /* An unaligned pair takes the tail of one block and the head of the
     * next: each block is still generated once. */
    uint32_t w[4], cur[4], next[4];
    sequence_block(key, seq, block, next);
    for (int64_t i = 0; i < count; i += 2) {
        memcpy(cur, next, sizeof cur);
        sequence_block(key, seq, ++block, next);
        for (unsigned k = 0; k < 4; k++) {
            w[k] = (first + k < 4) ? cur[first + k] : next[first + k - 4];
        }
        ebm__box_muller(w[0], w[1], w[2], w[3], &pair[0], &pair[1]);
        out[i] = pair[0];
        if (i + 1 == count) {
            return pair[1];
        }
        out[i + 1] = pair[1];
    }
    return 0.0;
}

/* ---- batched draws ------------------------------------------------------- */

/*
 * A batched call uses a sequence of its own: if the fills have started on the
 * current sequence (pos != 0) or left a spare, that sequence is abandoned
 * (and the spare dropped) before one is taken, and the next fill starts on a
 * fresh sequence after it. So fill words and row words never coincide.
 */
ebm__rng_mark ebm__rng_save(const ebm_rng_t *r)
{
    ebm__rng_mark mark = {r->seq, r->pos, r->has_spare, r->spare};
    return mark;
}

void ebm__rng_restore(ebm_rng_t *r, const ebm__rng_mark *mark)
{
    r->seq = mark->seq;
    r->pos = mark->pos;
    r->has_spare = mark->has_spare;
    r->spare = mark->spare;
}

ebm__stream ebm__rng_take_stream(ebm_rng_t *r)
{
    if (r->pos != 0 || r->has_spare) {
        r->seq++;
        r->pos = 0;
        r->has_spare = 0;
        r->spare = 0.0;
    }
    ebm__stream s;
    split_key(r->key, s.key);
    s.seq = r->seq;
    r->seq++;
    return s;
}

ebm__stream ebm__stream_for_try(const ebm__stream *base, uint64_t k)
{
    ebm__stream t = *base;
    uint64_t state = base->seq ^ (k * 0x9e3779b97f4a7c15ULL);
    t.seq = ebm__splitmix64(&state);
    return t;
}

void ebm__rng_take_streams(ebm_rng_t *rng, int count, ebm__stream *out)
{
    if (count <= 0) {
        return;
    }
    /* As count calls of ebm__rng_take_stream: after the first, sequences
     * come one after another (a coupled step takes 99). */
    out[0] = ebm__rng_take_stream(rng);
    for (int i = 1; i < count; i++) {
        out[i] = out[0];
        out[i].seq = out[0].seq + (uint64_t)i;
    }
    rng->seq = out[0].seq + (uint64_t)count;
}

/* The block holding word `word` of row `row` (c0 = word / 4, c1 = row). */
static inline uint64_t row_block(uint32_t row, uint64_t word)
{
    return ((uint64_t)row << 32) + (word >> 2);
}

void ebm__stream_uniform(const ebm__stream *s, uint32_t row, uint64_t word, int64_t count,
                         float *out)
{
    uniform_words(s->key, s->seq, row_block(row, word), (unsigned)(word & 3u), count, out);
}

void ebm__stream_uniform_rows(const ebm__stream *s, int64_t n, const int64_t *rows,
                              uint64_t word, int64_t count, float *out, int64_t ldo)
{
    if (word % 4 == 0 && count <= EBM__SHORT_ROW) {
        ebm__kern()->uniform_rows(s->key, s->seq, n, rows, word >> 2, count, out, ldo);
        return;
    }
    for (int64_t r = 0; r < n; r++) {
        ebm__stream_uniform(s, ebm__row_id(rows, r), word, count, out + r * ldo);
    }
}

void ebm__stream_block(const ebm__stream *s, uint32_t row, uint64_t word, uint32_t out[4])
{
    sequence_block(s->key, s->seq, row_block(row, word), out);
}

void ebm__stream_normal(const ebm__stream *s, uint32_t row, uint64_t word, int64_t count,
                        float *out)
{
    (void)normal_words(s->key, s->seq, row_block(row, word), (unsigned)(word & 3u), count, out);
}

/* ---- public API ---------------------------------------------------------- */

int ebm_rng_state_words(void) { return EBM_RNG_STATE_WORDS; }

/* r's message slot, where a failed call leaves its message. A generator is
 * used by one thread at a time, so the slot of a const generator is
 * logically mutable too. */
static char *message_slot(const ebm_rng_t *r)
{
    return ((ebm_rng_t *)(uintptr_t)r)->errmsg;
}

static ebm_rng_t *rng_new(uint64_t key)
{
    ebm_rng_t *r = malloc(sizeof *r);
    if (r == NULL) {
        return NULL;
    }
    r->key = key;
    r->seq = 0;
    r->pos = 0;
    r->has_spare = 0;
    r->spare = 0.0;
    r->errmsg[0] = '\0';
    return r;
}

/*
 * key = mix64(mix64(seed) ^ mix64(stream ^ RNG_STREAM_DOMAIN)), where mix64(x)
 * is splitmix64's output for state x (s = x; splitmix64(&s)). Each mix64 is a
 * bijection, so for a fixed seed distinct streams give distinct keys, and for
 * a fixed stream distinct seeds do; two pairs that differ in both collide with
 * probability about 2^-64.
 */
int ebm_rng_create(ebm_rng_t **out, uint64_t seed, uint64_t stream)
{
    if (out == NULL) {
        return EBM_ENULL;
    }
    *out = NULL;
    uint64_t key = mix64(mix64(seed) ^ mix64(stream ^ RNG_STREAM_DOMAIN));
    ebm_rng_t *r = rng_new(key);
    if (r == NULL) {
        return EBM_ENOMEM;
    }
    *out = r;
    return EBM_OK;
}

/*
 * child key = mix64(mix64(mix64(mix64(parent key ^ RNG_DERIVE_DOMAIN) ^ parent seq)
 *                   ^ parent pos) ^ index):
 * injective in index for a given parent state, and in the parent's position
 * (sequence number, then word) for a given index, so children taken at
 * different points of the parent differ too, even when only fills came
 * between. The child starts at sequence 0.
 */
void ebm__rng_child(const ebm_rng_t *parent, uint64_t index, ebm_rng_t *child)
{
    uint64_t key =
        mix64(mix64(mix64(mix64(parent->key ^ RNG_DERIVE_DOMAIN) ^ parent->seq) ^ parent->pos) ^
              index);
    memset(child, 0, sizeof *child);
    child->key = key;
}

int ebm_rng_derive(ebm_rng_t **out, const ebm_rng_t *parent, uint64_t index)
{
    if (out == NULL) {
        return parent == NULL ? EBM_ENULL
                              : ebm__error(message_slot(parent), EBM_ENULL, "out is NULL");
    }
    *out = NULL;
    if (parent == NULL) {
        return EBM_ENULL;
    }
    ebm_rng_t *r = malloc(sizeof *r);
    if (r == NULL) {
        return ebm__error(message_slot(parent), EBM_ENOMEM, "out of memory for a generator");
    }
    ebm__rng_child(parent, index, r);
    *out = r;
    return EBM_OK;
}

int ebm_rng_get_state(const ebm_rng_t *r, uint64_t *state)
{
    if (r == NULL) {
        return EBM_ENULL;
    }
    if (state == NULL) {
        return ebm__error(message_slot(r), EBM_ENULL, "state is NULL");
    }
    uint64_t spare_bits;
    memcpy(&spare_bits, &r->spare, sizeof spare_bits);
    state[0] = r->key;
    state[1] = r->seq;
    state[2] = r->pos;
    state[3] = (uint64_t)r->has_spare;
    state[4] = r->has_spare ? spare_bits : 0;
    state[5] = RNG_STATE_TAG;
    return EBM_OK;
}

int ebm_rng_set_state(ebm_rng_t *r, const uint64_t *state)
{
    if (r == NULL) {
        return EBM_ENULL;
    }
    if (state == NULL) {
        return ebm__error(message_slot(r), EBM_ENULL, "state is NULL");
    }
    if (state[5] != RNG_STATE_TAG) {
        return ebm__error(message_slot(r), EBM_EVALUE,
                          "state[5] (format tag) is 0x%016" PRIx64 "; it must be 0x%016" PRIx64
                          ", the tag of a state written by ebm_rng_get_state",
                          state[5], (uint64_t)RNG_STATE_TAG);
    }
    if (state[3] > 1) {
        return ebm__error(message_slot(r), EBM_EVALUE,
                          "state[3] (has_spare) is %" PRIu64 "; it must be 0 or 1", state[3]);
    }
    double spare;
    memcpy(&spare, &state[4], sizeof spare);
    if (state[3] == 1 && !isfinite(spare)) {
        return ebm__error(message_slot(r), EBM_EVALUE,
                          "state[4] (spare) is 0x%016" PRIx64 " (%g); it must be a finite double",
                          state[4], spare);
    }
    if (state[3] == 0 && state[4] != 0) {
        return ebm__error(message_slot(r), EBM_EVALUE,
                          "state[4] (spare) is 0x%016" PRIx64
                          "; it must be 0 when state[3] (has_spare) is 0",
                          state[4]);
    }
    r->key = state[0];
    r->seq = state[1];
    r->pos = state[2];
    r->has_spare = (int)state[3];
    r->spare = r->has_spare ? spare : 0.0;
    return EBM_OK;
}

/* The checks shared by the fills; EBM_OK or the code, message in r. */
static int check_fill(ebm_rng_t *r, int64_t n, const float *out)
{
    if (r == NULL) {
        return EBM_ENULL;
    }
    if (n < 0) {
        return ebm__error(message_slot(r), EBM_ESHAPE, "n is %" PRId64 "; it must be >= 0", n);
    }
    if (n > 0 && out == NULL) {
        return ebm__error(message_slot(r), EBM_ENULL, "out is NULL (n is %" PRId64 ")", n);
    }
    return EBM_OK;
}

int ebm_rng_uniform(ebm_rng_t *r, int64_t n, float *out)
{
    EBM__PROPAGATE(check_fill(r, n, out));
    uint32_t key[2];
    split_key(r->key, key);
    uniform_words(key, r->seq, r->pos >> 2, (unsigned)(r->pos & 3u), n, out);
    r->pos += (uint64_t)n;
    return EBM_OK;
}

int ebm_rng_normal(ebm_rng_t *r, int64_t n, float *out)
{
    EBM__PROPAGATE(check_fill(r, n, out));
    if (n == 0) {
        return EBM_OK;
    }
    if (r->has_spare) {
        out[0] = (float)r->spare;
        r->has_spare = 0;
        r->spare = 0.0;
        out++;
        n--;
    }
    uint32_t key[2];
    split_key(r->key, key);
    double sine = normal_words(key, r->seq, r->pos >> 2, (unsigned)(r->pos & 3u), n, out);
    r->pos += 4 * (uint64_t)(n / 2 + n % 2); /* pairs begun; n + 1 could overflow */
    if (n % 2 != 0) {
        r->has_spare = 1;
        r->spare = sine;
    }
    return EBM_OK;
}

const char *ebm_rng_errmsg(const ebm_rng_t *r)
{
    if (r == NULL) {
        return "rng is NULL";
    }
    return r->errmsg;
}

void ebm_rng_destroy(ebm_rng_t *r) { free(r); }
