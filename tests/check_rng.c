/* The random-number generator: known answers, the counter layout, streams
 * and checkpoints, statistics (each with a broken twin that must fail), and
 * bad input. */
#include "tests.h"

#include "rng.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

static void get_state(const ebm_rng_t *r, uint64_t state[EBM_RNG_STATE_WORDS])
{
    ck_assert_int_eq(ebm_rng_get_state(r, state), EBM_OK);
}

static void assert_states_equal(const uint64_t *a, const uint64_t *b)
{
    for (int i = 0; i < EBM_RNG_STATE_WORDS; i++) {
        ck_assert_msg(a[i] == b[i], "state word %d differs", i);
    }
}

/* ---- a slow reference of the documented counter layout ------------------ */

static uint32_t ref_word(uint64_t key, uint32_t c0, uint32_t c1, uint64_t seq, unsigned k)
{
    uint32_t ctr[4] = {c0, c1, (uint32_t)seq, (uint32_t)(seq >> 32)};
    uint32_t kk[2] = {(uint32_t)key, (uint32_t)(key >> 32)};
    uint32_t out[4];
    ebm__philox4x32_10(ctr, kk, out);
    return out[k];
}

/* Word pos of a sequence as the public fills read it: block pos/4 split into c0, c1. */
static uint32_t ref_fill_word(uint64_t key, uint64_t seq, uint64_t pos)
{
    uint64_t block = pos / 4;
    return ref_word(key, (uint32_t)block, (uint32_t)(block >> 32), seq, (unsigned)(pos % 4));
}

/* Word `word` of row `row` of a batched call: c0 = word/4, c1 = row. */
static uint32_t ref_row_word(const ebm__stream *s, uint32_t row, uint64_t word)
{
    uint64_t key = (uint64_t)s->key[0] | ((uint64_t)s->key[1] << 32);
    return ref_word(key, (uint32_t)(word / 4), row, s->seq, (unsigned)(word % 4));
}

static float ref_uniform(uint32_t w) { return (float)(w >> 8) / 16777216.0f; }

/* Box-Muller on four words as documented: u1 in (0,1] from w[0], w[1]; u2 in
 * [0,1) from w[2], w[3]; 53 bits each. */
static void ref_normal_pair(const uint32_t w[4], float z[2])
{
    double u1 = (double)((((uint64_t)(w[0] >> 5)) << 26 | (w[1] >> 6)) + 1) / 9007199254740992.0;
    double u2 = (double)(((uint64_t)(w[2] >> 5)) << 26 | (w[3] >> 6)) / 9007199254740992.0;
    double radius = sqrt(-2.0 * log(u1));
    double angle = 6.283185307179586476925286766559 * u2;
    z[0] = (float)(radius * cos(angle));
    z[1] = (float)(radius * sin(angle));
}

/* ---- known answers ---------------------------------------------------------- */

/* Random123's kat_vectors for philox4x32_10. */
START_TEST(test_philox_known_answers)
{
    static const struct {
        uint32_t ctr[4], key[2], out[4];
    } kat[3] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
         {0xffffffff, 0xffffffff},
         {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
         {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (int t = 0; t < 3; t++) {
        uint32_t out[4];
        ebm__philox4x32_10(kat[t].ctr, kat[t].key, out);
        for (int k = 0; k < 4; k++) {
            ck_assert_msg(out[k] == kat[t].out[k], "vector %d word %d: 0x%08x, expected 0x%08x",
                          t, k, (unsigned)out[k], (unsigned)kat[t].out[k]);
        }
    }
}
END_TEST

/* The published first outputs of splitmix64 from state 1234567. */
START_TEST(test_splitmix64_known_answers)
{
    uint64_t state = 1234567;
    ck_assert(ebm__splitmix64(&state) == 6457827717110365317ULL);
    ck_assert(ebm__splitmix64(&state) == 3203168211198807973ULL);
    ck_assert(ebm__splitmix64(&state) == 9817491932198370423ULL);
}
END_TEST

/*
 * Our own known answers (GSL style), computed once from this implementation
 * and confirmed by an independent Python transcription of the documented
 * derivation: any change of key derivation, counter layout or conversion
 * fails here. Uniforms are integer arithmetic and compared exactly; the
 * normal's reference comes from the transcription's libm log/cos/sin, which
 * may differ from the library's own in a float rounding, so it gets 1e-6 of
 * slack, far less than any change of the stream would move it.
 */
START_TEST(test_own_known_answers)
{
    ebm_rng_t *r = t_rng(1, 0);
    uint64_t state[EBM_RNG_STATE_WORDS];
    get_state(r, state);
    ck_assert(state[0] == 0x6042d6fc73e4c08aULL); /* the key made from (1, 0) */

    float *u = t_floats(10000);
    ck_assert_int_eq(ebm_rng_uniform(r, 10000, u), EBM_OK);
    ck_assert_float_eq(u[0], 0x1.458ac4p-1f);
    ck_assert_float_eq(u[1], 0x1.9545f0p-3f);
    ck_assert_float_eq(u[2], 0x1.b5cc90p-4f);
    ck_assert_float_eq(u[3], 0x1.ba525ap-1f);
    ck_assert_float_eq(u[9999], 0x1.342d7cp-1f); /* 0.6019095182... */
    ebm_rng_destroy(r);

    r = t_rng(1, 0);
    ck_assert_int_eq(ebm_rng_normal(r, 10000, u), EBM_OK);
    ck_assert_double_eq_tol(u[9999], 0x1.2f4b04p-2, 1e-6); /* 0.2961845994 */
    ebm_rng_destroy(r);
    free(u);
}
END_TEST

/* ---- the counter layout ------------------------------------------------------ */

/* The public fills read words pos, pos+1, ... of sequence seq, including a
 * normal fill that starts mid-block. */
START_TEST(test_fill_layout)
{
    ebm_rng_t *r = t_rng(7, 3);
    uint64_t state[EBM_RNG_STATE_WORDS];
    get_state(r, state);
    uint64_t key = state[0], seq = state[1];

    float u[11];
    ck_assert_int_eq(ebm_rng_uniform(r, 11, u), EBM_OK);
    for (uint64_t i = 0; i < 11; i++) {
        ck_assert_float_eq(u[i], ref_uniform(ref_fill_word(key, seq, i)));
    }
    /* pos is 11: the next normal pairs use words 11..14, 15..18, 19..22. */
    float z[5];
    ck_assert_int_eq(ebm_rng_normal(r, 5, z), EBM_OK);
    for (int j = 0; j < 3; j++) {
        uint32_t w[4];
        float pair[2];
        for (unsigned k = 0; k < 4; k++) {
            w[k] = ref_fill_word(key, seq, 11 + 4 * (uint64_t)j + k);
        }
        ref_normal_pair(w, pair);
        ck_assert_float_eq(z[2 * j], pair[0]);
        if (2 * j + 1 < 5) {
            ck_assert_float_eq(z[2 * j + 1], pair[1]);
        }
    }
    get_state(r, state);
    ck_assert(state[1] == seq && state[2] == 23 && state[3] == 1);
    ebm_rng_destroy(r);

    /* A pos past 2^34 words: the block index carries into c1. */
    r = t_rng(7, 3);
    get_state(r, state);
    state[2] = (1ULL << 34) - 2;
    ck_assert_int_eq(ebm_rng_set_state(r, state), EBM_OK);
    ck_assert_int_eq(ebm_rng_uniform(r, 4, u), EBM_OK);
    for (uint64_t i = 0; i < 4; i++) {
        ck_assert_float_eq(u[i], ref_uniform(ref_fill_word(key, seq, state[2] + i)));
    }
    ebm_rng_destroy(r);
}
END_TEST

/* Row `row` of a batched call from word `word`, uniforms and normals, against
 * the reference. */
static void check_row_layout(const ebm__stream *s, uint32_t row, uint64_t word, int64_t count)
{
    float out[16];
    ck_assert_int_le(count, 16);
    ebm__stream_uniform(s, row, word, count, out);
    for (int64_t i = 0; i < count; i++) {
        ck_assert_float_eq(out[i], ref_uniform(ref_row_word(s, row, word + (uint64_t)i)));
    }
    ebm__stream_normal(s, row, word, count, out);
    for (int64_t i = 0; i < count; i++) {
        uint64_t pair_word = word + 4 * (uint64_t)(i / 2);
        uint32_t w[4];
        float pair[2];
        for (unsigned k = 0; k < 4; k++) {
            w[k] = ref_row_word(s, row, pair_word + k);
        }
        ref_normal_pair(w, pair);
        ck_assert_float_eq(out[i], pair[i % 2]);
    }
}

/* Batched draws: row r, word w is word w%4 of philox({w/4, r, seq}, key), for
 * every starting word and count, the largest row, and a sequence number
 * above 2^32. */
START_TEST(test_stream_layout)
{
    ebm_rng_t *r = t_rng(11, 0);
    ebm__stream streams[2];
    streams[0] = ebm__rng_take_stream(r);
    streams[1] = ebm__rng_take_stream(r);
    streams[1].seq += 0x100000000ULL;
    const uint32_t rows[3] = {0, 5, 0xffffffffu};
    for (int si = 0; si < 2; si++) {
        for (int ri = 0; ri < 3; ri++) {
            for (uint64_t word = 0; word < 9; word++) {
                for (int64_t count = 0; count <= 13; count++) {
                    check_row_layout(&streams[si], rows[ri], word, count);
                }
            }
        }
    }
    ebm_rng_destroy(r);
}
END_TEST

/* ---- streams: same seed, different seeds, children ----------------------- */

START_TEST(test_same_seed_same_bytes)
{
    float a[1000], b[1000];
    ebm_rng_t *r1 = t_rng(42, 9), *r2 = t_rng(42, 9);
    ck_assert_int_eq(ebm_rng_uniform(r1, 1000, a), EBM_OK);
    ck_assert_int_eq(ebm_rng_uniform(r2, 1000, b), EBM_OK);
    ck_assert_mem_eq(a, b, sizeof a);
    ck_assert_int_eq(ebm_rng_normal(r1, 999, a), EBM_OK);
    ck_assert_int_eq(ebm_rng_normal(r2, 999, b), EBM_OK);
    ck_assert_mem_eq(a, b, sizeof a);
    ebm_rng_destroy(r1);
    ebm_rng_destroy(r2);
}
END_TEST

static int count_equal(const float *a, const float *b, int n)
{
    int same = 0;
    for (int i = 0; i < n; i++) {
        same += a[i] == b[i];
    }
    return same;
}

/* Different (seed, stream) pairs give unrelated draws; (a, b) and (b, a)
 * differ, and so do (s, s) pairs (the stream is mixed with a domain constant). */
START_TEST(test_different_seeds_differ)
{
    const uint64_t pairs[][2] = {{42, 9}, {43, 9}, {42, 10}, {9, 42},
                                 {0, 0},  {1, 1},  {0, 1},   {1, 0}};
    const int n_pairs = (int)(sizeof pairs / sizeof pairs[0]);
    float draws[8][256];
    for (int i = 0; i < n_pairs; i++) {
        ebm_rng_t *r = t_rng(pairs[i][0], pairs[i][1]);
        ck_assert_int_eq(ebm_rng_uniform(r, 256, draws[i]), EBM_OK);
        ebm_rng_destroy(r);
    }
    /* 256 independent 24-bit uniforms share a value by chance with
     * probability about 256 * 2^-24 per pair: allow one. */
    for (int i = 0; i < n_pairs; i++) {
        for (int j = i + 1; j < n_pairs; j++) {
            ck_assert_msg(count_equal(draws[i], draws[j], 256) <= 1, "pairs %d and %d agree", i, j);
        }
    }
}
END_TEST

START_TEST(test_derive)
{
    ebm_rng_t *parent = t_rng(5, 0);
    float skip[3];
    ck_assert_int_eq(ebm_rng_normal(parent, 3, skip), EBM_OK); /* mid-block, spare pending */
    uint64_t before[EBM_RNG_STATE_WORDS], after[EBM_RNG_STATE_WORDS];
    get_state(parent, before);

    enum { N_CHILDREN = 4, N_DRAWS = 256 };
    float draws[N_CHILDREN + 2][N_DRAWS];
    ebm_rng_t *child[N_CHILDREN];
    for (int i = 0; i < N_CHILDREN; i++) {
        ck_assert_int_eq(ebm_rng_derive(&child[i], parent, (uint64_t)i), EBM_OK);
        uint64_t cs[EBM_RNG_STATE_WORDS];
        get_state(child[i], cs);
        ck_assert(cs[1] == 0 && cs[2] == 0 && cs[3] == 0); /* a child starts afresh */
        ck_assert_int_eq(ebm_rng_uniform(child[i], N_DRAWS, draws[i]), EBM_OK);
    }
    get_state(parent, after);
    assert_states_equal(before, after);

    /* The parent's own continuation is that of an untouched twin. */
    ebm_rng_t *twin = t_rng(5, 0);
    ck_assert_int_eq(ebm_rng_normal(twin, 3, skip), EBM_OK);
    float twin_draws[N_DRAWS];
    ck_assert_int_eq(ebm_rng_uniform(twin, N_DRAWS, twin_draws), EBM_OK);
    ck_assert_int_eq(ebm_rng_uniform(parent, N_DRAWS, draws[N_CHILDREN]), EBM_OK);
    ck_assert_mem_eq(draws[N_CHILDREN], twin_draws, sizeof twin_draws);

    /* Same index after the parent took a sequence: a different child. */
    (void)ebm__rng_take_stream(parent);
    ebm_rng_t *later = NULL;
    ck_assert_int_eq(ebm_rng_derive(&later, parent, 0), EBM_OK);
    ck_assert_int_eq(ebm_rng_uniform(later, N_DRAWS, draws[N_CHILDREN + 1]), EBM_OK);

    for (int i = 0; i < N_CHILDREN + 2; i++) {
        for (int j = i + 1; j < N_CHILDREN + 2; j++) {
            ck_assert_msg(count_equal(draws[i], draws[j], N_DRAWS) <= 1, "%d and %d agree", i, j);
        }
    }

    /* Deriving is deterministic: a twin at the same position gives the same
     * child; a fill that moves the parent's position gives another. */
    ebm_rng_t *again = NULL, *moved = NULL, *twin2 = t_rng(5, 0);
    float again_draws[N_DRAWS], moved_draws[N_DRAWS];
    ck_assert_int_eq(ebm_rng_normal(twin2, 3, skip), EBM_OK);
    ck_assert_int_eq(ebm_rng_derive(&again, twin2, 2), EBM_OK);
    ck_assert_int_eq(ebm_rng_uniform(twin2, 1, skip), EBM_OK);
    ck_assert_int_eq(ebm_rng_derive(&moved, twin2, 2), EBM_OK);
    ck_assert_int_eq(ebm_rng_uniform(moved, N_DRAWS, moved_draws), EBM_OK);
    ck_assert_int_le(count_equal(moved_draws, draws[2], N_DRAWS), 1);
    ebm_rng_destroy(moved);
    ebm_rng_destroy(twin2);
    ck_assert_int_eq(ebm_rng_uniform(again, N_DRAWS, again_draws), EBM_OK);
    ck_assert_mem_eq(again_draws, draws[2], sizeof again_draws);

    for (int i = 0; i < N_CHILDREN; i++) {
        ebm_rng_destroy(child[i]);
    }
    ebm_rng_destroy(later);
    ebm_rng_destroy(again);
    ebm_rng_destroy(twin);
    ebm_rng_destroy(parent);
}
END_TEST

/* ---- continuation and checkpoints ---------------------------------------- */

typedef int (*fill_fn)(ebm_rng_t *, int64_t, float *);

/* Fills of sizes taken from `sizes` give the same numbers as one fill. */
static void check_split_fills(fill_fn fill, const int *sizes, int n_sizes)
{
    int total = 0;
    for (int i = 0; i < n_sizes; i++) {
        total += sizes[i];
    }
    float *whole = t_floats(total), *parts = t_floats(total);
    ebm_rng_t *r1 = t_rng(3, 1), *r2 = t_rng(3, 1);
    ck_assert_int_eq(fill(r1, total, whole), EBM_OK);
    int at = 0;
    for (int i = 0; i < n_sizes; i++) {
        ck_assert_int_eq(fill(r2, sizes[i], parts + at), EBM_OK);
        at += sizes[i];
    }
    ck_assert_mem_eq(whole, parts, (size_t)total * sizeof *whole);
    uint64_t s1[EBM_RNG_STATE_WORDS], s2[EBM_RNG_STATE_WORDS];
    get_state(r1, s1);
    get_state(r2, s2);
    assert_states_equal(s1, s2);
    ebm_rng_destroy(r1);
    ebm_rng_destroy(r2);
    free(whole);
    free(parts);
}

START_TEST(test_split_fills)
{
    const int three_one[] = {3, 1};
    const int ragged[] = {1, 1, 0, 2, 5, 3, 0, 7, 1, 4, 9, 2};
    check_split_fills(ebm_rng_uniform, three_one, 2);
    check_split_fills(ebm_rng_normal, three_one, 2);
    check_split_fills(ebm_rng_uniform, ragged, 12);
    check_split_fills(ebm_rng_normal, ragged, 12);
}
END_TEST

/* A saved state reproduces the continuation exactly, from a mid-block pos
 * with a pending spare, into the same or another generator. */
START_TEST(test_state_round_trip)
{
    ck_assert_int_eq(ebm_rng_state_words(), EBM_RNG_STATE_WORDS);
    ck_assert_int_eq(EBM_RNG_STATE_WORDS, 6);
    ebm_rng_t *r = t_rng(8, 2);
    float skip[5];
    ck_assert_int_eq(ebm_rng_uniform(r, 2, skip), EBM_OK);
    ck_assert_int_eq(ebm_rng_normal(r, 5, skip), EBM_OK);
    uint64_t saved[EBM_RNG_STATE_WORDS];
    get_state(r, saved);
    ck_assert(saved[2] % 4 != 0 && saved[3] == 1); /* mid-block, spare pending */

    float first[33], second[33], third[33];
    ck_assert_int_eq(ebm_rng_normal(r, 17, first), EBM_OK);
    ck_assert_int_eq(ebm_rng_uniform(r, 16, first + 17), EBM_OK);

    ck_assert_int_eq(ebm_rng_set_state(r, saved), EBM_OK);
    ck_assert_int_eq(ebm_rng_normal(r, 17, second), EBM_OK);
    ck_assert_int_eq(ebm_rng_uniform(r, 16, second + 17), EBM_OK);
    ck_assert_mem_eq(first, second, sizeof first);

    ebm_rng_t *other = t_rng(99, 99);
    ck_assert_int_eq(ebm_rng_set_state(other, saved), EBM_OK);
    uint64_t copy[EBM_RNG_STATE_WORDS];
    get_state(other, copy);
    assert_states_equal(saved, copy);
    ck_assert_int_eq(ebm_rng_normal(other, 17, third), EBM_OK);
    ck_assert_int_eq(ebm_rng_uniform(other, 16, third + 17), EBM_OK);
    ck_assert_mem_eq(first, third, sizeof first);

    /* A hand-made spare comes out next. */
    saved[4] = 0x3ff8000000000000ULL; /* 1.5 */
    ck_assert_int_eq(ebm_rng_set_state(other, saved), EBM_OK);
    ck_assert_int_eq(ebm_rng_normal(other, 1, third), EBM_OK);
    ck_assert_float_eq(third[0], 1.5f);
    ebm_rng_destroy(r);
    ebm_rng_destroy(other);
}
END_TEST

/* Each kind of bad state: EBM_EVALUE, a message naming the word, r unchanged. */
START_TEST(test_set_state_rejects)
{
    ebm_rng_t *r = t_rng(4, 4);
    float skip[3];
    ck_assert_int_eq(ebm_rng_normal(r, 3, skip), EBM_OK);
    uint64_t good[EBM_RNG_STATE_WORDS];
    get_state(r, good);
    ck_assert(good[3] == 1);

    static const struct {
        int word;
        uint64_t has_spare, value;
        const char *names;
    } bad[] = {
        {5, 1, 0, "state[5]"},                          /* no tag */
        {5, 1, 0x45424d524e470002ULL, "state[5]"},      /* a format we did not write */
        {3, 2, 2, "state[3] (has_spare) is 2"},         /* has_spare not 0/1 */
        {3, 0xffffffffffffffffULL, 0xffffffffffffffffULL, "state[3]"},
        {4, 1, 0x7ff8000000000000ULL, "state[4]"},      /* NaN spare */
        {4, 1, 0x7ff0000000000000ULL, "state[4]"},      /* +inf spare */
        {4, 1, 0xfff0000000000000ULL, "state[4]"},      /* -inf spare */
        {4, 0, 0x3ff0000000000000ULL, "state[4]"},      /* a spare without has_spare */
        {4, 0, 0x8000000000000000ULL, "state[4]"},      /* -0.0 is not zero bits */
    };
    for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
        uint64_t state[EBM_RNG_STATE_WORDS], after[EBM_RNG_STATE_WORDS];
        memcpy(state, good, sizeof state);
        state[3] = bad[t].has_spare;
        state[bad[t].word] = bad[t].value;
        ck_assert_int_eq(ebm_rng_set_state(r, state), EBM_EVALUE);
        ck_assert_msg(strstr(ebm_rng_errmsg(r), bad[t].names) != NULL, "case %d: \"%s\"", (int)t,
                      ebm_rng_errmsg(r));
        get_state(r, after);
        assert_states_equal(good, after);
    }
    ck_assert_str_eq(ebm_rng_errmsg(r),
                     "state[4] (spare) is 0x8000000000000000; it must be 0 when state[3] "
                     "(has_spare) is 0");
    ebm_rng_destroy(r);
}
END_TEST

/* ---- batched calls ---------------------------------------------------------- */

START_TEST(test_take_stream)
{
    ebm_rng_t *r = t_rng(6, 0);
    uint64_t state[EBM_RNG_STATE_WORDS];

    /* Fresh generator: two calls take sequences 0 and 1. */
    ebm__stream a = ebm__rng_take_stream(r);
    ebm__stream b = ebm__rng_take_stream(r);
    get_state(r, state);
    ck_assert(a.seq != b.seq);
    ck_assert(a.key[0] == (uint32_t)state[0] && a.key[1] == (uint32_t)(state[0] >> 32));
    ck_assert(state[1] == b.seq + 1 && state[2] == 0);

    /* A fill now uses sequence state[1]; the next stream must not. */
    uint64_t fill_seq = state[1];
    float u[3];
    ck_assert_int_eq(ebm_rng_uniform(r, 3, u), EBM_OK);
    ebm__stream c = ebm__rng_take_stream(r);
    ck_assert(c.seq != fill_seq && c.seq != a.seq && c.seq != b.seq);
    get_state(r, state);
    ck_assert(state[1] != fill_seq && state[1] != c.seq && state[2] == 0);

    /* A pending spare alone (pos set back to 0 by hand) also retires the
     * sequence, and the spare is dropped. */
    ck_assert_int_eq(ebm_rng_normal(r, 1, u), EBM_OK);
    get_state(r, state);
    fill_seq = state[1];
    state[2] = 0;
    ck_assert_int_eq(ebm_rng_set_state(r, state), EBM_OK);
    ebm__stream d = ebm__rng_take_stream(r);
    ck_assert(d.seq != fill_seq);
    get_state(r, state);
    ck_assert(state[3] == 0 && state[4] == 0);
    ebm_rng_destroy(r);
}
END_TEST

/* ebm__rng_take_streams(count) takes what count calls of ebm__rng_take_stream
 * take and leaves the generator where they leave it: fresh, after a fill,
 * and with a pending spare; count 0 takes nothing. */
START_TEST(test_take_streams)
{
    for (int before = 0; before < 3; before++) {
        for (int count = 0; count <= 99; count += count < 3 ? 1 : 48) {
            ebm_rng_t *r1 = t_rng(9, (uint64_t)before), *r2 = t_rng(9, (uint64_t)before);
            float u[3];
            for (int i = 0; i < 2; i++) {
                ebm_rng_t *r = i ? r2 : r1;
                if (before == 1) {
                    ck_assert_int_eq(ebm_rng_uniform(r, 3, u), EBM_OK);
                } else if (before == 2) {
                    ck_assert_int_eq(ebm_rng_normal(r, 1, u), EBM_OK);
                }
            }
            ebm__stream many[99], one;
            ebm__rng_take_streams(r1, count, many);
            for (int i = 0; i < count; i++) {
                one = ebm__rng_take_stream(r2);
                ck_assert(memcmp(&one, &many[i], sizeof one) == 0);
            }
            uint64_t s1[EBM_RNG_STATE_WORDS], s2[EBM_RNG_STATE_WORDS];
            get_state(r1, s1);
            get_state(r2, s2);
            ck_assert_msg(memcmp(s1, s2, sizeof s1) == 0, "state after %d streams", count);
            ebm_rng_destroy(r1);
            ebm_rng_destroy(r2);
        }
    }
}
END_TEST

/* Row r's numbers depend on neither the other rows nor the count. */
START_TEST(test_stream_rows_independent)
{
    enum { ROWS = 10, COUNT = 37 };
    ebm_rng_t *r = t_rng(12, 1);
    ebm__stream s = ebm__rng_take_stream(r);
    float all[ROWS][COUNT], alone[COUNT + 20];
    float all_z[ROWS][COUNT], alone_z[COUNT + 20];
    for (uint32_t row = 0; row < ROWS; row++) {
        ebm__stream_uniform(&s, row, 0, COUNT, all[row]);
        ebm__stream_normal(&s, row, 0, COUNT, all_z[row]);
    }
    ebm__stream_uniform(&s, 7, 0, COUNT + 20, alone);
    ebm__stream_normal(&s, 7, 0, COUNT + 20, alone_z);
    ck_assert_mem_eq(all[7], alone, sizeof all[7]);
    ck_assert_mem_eq(all_z[7], alone_z, sizeof all_z[7]);
    for (int i = 0; i < ROWS; i++) {
        for (int j = i + 1; j < ROWS; j++) {
            ck_assert_int_le(count_equal(all[i], all[j], COUNT), 1);
        }
    }

    /* A draw from a word that is not a multiple of 4 is the matching slice of a
     * draw from word 0; for normals, pair j starts at word + 4j. */
    float from_zero[64], from_word[64];
    for (uint64_t word = 1; word < 12; word++) {
        ebm__stream_uniform(&s, 3, 0, 64, from_zero);
        ebm__stream_uniform(&s, 3, word, 64 - (int64_t)word, from_word);
        ck_assert_mem_eq(from_word, from_zero + word, (64 - word) * sizeof(float));
    }
    for (uint64_t first = 0; first < 4; first++) {
        ebm__stream_normal(&s, 3, first, 64, from_zero);
        for (uint64_t pairs = 1; pairs < 6; pairs++) {
            ebm__stream_normal(&s, 3, first + 4 * pairs, 64 - 2 * (int64_t)pairs, from_word);
            ck_assert_mem_eq(from_word, from_zero + 2 * pairs, (64 - 2 * pairs) * sizeof(float));
        }
    }
    ebm_rng_destroy(r);
}
END_TEST

/* ---- statistics ------------------------------------------------------------- */

/*
 * Chi-square with 100 equiprobable bins has 99 degrees of freedom; its
 * 1 - 1e-6 quantile is 180.79 (found by bisection on the regularised upper
 * incomplete gamma Q(99/2, x/2) = 1e-6; Wilson-Hilferty gives 181.1). So a
 * correct generator fails each such test for about one seed in a million.
 * With fixed seeds the outcome is deterministic.
 */
#define CHI2_BINS 100
#define CHI2_LIMIT 180.79

static int64_t stat_draws(void) { return t_level() >= 2 ? 10000000 : 1000000; }

/* Sum over bins of (count - n/bins)^2 / (n/bins), with bin[i] in [0, bins).
 * (Check's assertions write to a pipe each time: none inside the loops.) */
static double chi_square(const int *bin, int64_t n)
{
    int64_t counts[CHI2_BINS] = {0};
    for (int64_t i = 0; i < n; i++) {
        counts[bin[i]]++;
    }
    double expected = (double)n / CHI2_BINS, sum = 0.0;
    for (int b = 0; b < CHI2_BINS; b++) {
        double d = (double)counts[b] - expected;
        sum += d * d / expected;
    }
    return sum;
}

/* The bin of a probability; values outside [0,1) (counted and failed by the
 * callers) go to an end bin rather than out of bounds. */
static int bin_of(double p)
{
    if (!(p > 0.0)) {
        return 0;
    }
    return p < 1.0 ? (int)(p * CHI2_BINS) : CHI2_BINS - 1;
}

static double uniform_chi_square(const float *u, int64_t n, int *bins)
{
    int64_t outside = 0;
    for (int64_t i = 0; i < n; i++) {
        outside += !(u[i] >= 0.0f && u[i] < 1.0f);
        bins[i] = bin_of(u[i]);
    }
    ck_assert_int_eq(outside, 0);
    return chi_square(bins, n);
}

/* Normals binned by Phi(z) = erfc(-z / sqrt 2) / 2 into equiprobable bins. */
static double normal_chi_square(const float *z, int64_t n, int *bins)
{
    int64_t not_finite = 0;
    for (int64_t i = 0; i < n; i++) {
        not_finite += !isfinite(z[i]);
        bins[i] = bin_of(0.5 * erfc(-(double)z[i] / sqrt(2.0)));
    }
    ck_assert_int_eq(not_finite, 0);
    return chi_square(bins, n);
}

/* Uniforms: 100-bin chi-square of the fills and of batched rows. Broken twin:
 * u^1.03, whose noncentrality at 1e6 draws is about 890 (mean statistic about
 * 990, sd about 60): it must exceed the limit. */
START_TEST(test_uniform_chi_square)
{
    int64_t n = stat_draws();
    float *u = t_floats(n);
    int *bins = malloc((size_t)n * sizeof *bins);
    ck_assert_ptr_nonnull(bins);

    ebm_rng_t *r = t_rng(2024, 0);
    ck_assert_int_eq(ebm_rng_uniform(r, n, u), EBM_OK);
    double chi2 = uniform_chi_square(u, n, bins);
    ck_assert_msg(chi2 < CHI2_LIMIT, "fill: chi-square %g", chi2);

    for (int64_t i = 0; i < n; i++) {
        u[i] = (float)pow(u[i], 1.03);
    }
    double broken = uniform_chi_square(u, n, bins);
    ck_assert_msg(broken > CHI2_LIMIT, "broken twin passed: chi-square %g", broken);

    /* Batched rows of 1000 words each. */
    ebm__stream s = ebm__rng_take_stream(r);
    for (int64_t row = 0; row < n / 1000; row++) {
        ebm__stream_uniform(&s, (uint32_t)row, 0, 1000, u + row * 1000);
    }
    chi2 = uniform_chi_square(u, n, bins);
    ck_assert_msg(chi2 < CHI2_LIMIT, "rows: chi-square %g", chi2);

    ebm_rng_destroy(r);
    free(u);
    free(bins);
}
END_TEST

/*
 * Normals: mean and variance within 5 standard errors (sd of the mean
 * 1/sqrt(n), of the sample variance sqrt(2/n)): each fails with probability
 * 5.7e-7. Broken twins: a mean shifted by 0.01 (10 standard errors at 1e6)
 * and a scale of 1.02 (variance off by 0.04, 29 standard errors).
 */
static void normal_moments(const float *z, int64_t n, double shift, double scale, double *mean,
                           double *var)
{
    double sum = 0.0, sum2 = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double x = shift + scale * z[i];
        sum += x;
        sum2 += x * x;
    }
    *mean = sum / (double)n;
    *var = sum2 / (double)n - *mean * *mean;
}

START_TEST(test_normal_moments)
{
    int64_t n = stat_draws();
    float *z = t_floats(n);
    ebm_rng_t *r = t_rng(2025, 0);
    ck_assert_int_eq(ebm_rng_normal(r, n, z), EBM_OK);
    double mean_tol = 5.0 / sqrt((double)n), var_tol = 5.0 * sqrt(2.0 / (double)n);
    double mean, var;

    normal_moments(z, n, 0.0, 1.0, &mean, &var);
    ck_assert_msg(fabs(mean) < mean_tol, "mean %g", mean);
    ck_assert_msg(fabs(var - 1.0) < var_tol, "variance %g", var);

    normal_moments(z, n, 0.01, 1.0, &mean, &var);
    ck_assert_msg(fabs(mean) > mean_tol, "broken twin (shift) passed: mean %g", mean);
    normal_moments(z, n, 0.0, 1.02, &mean, &var);
    ck_assert_msg(fabs(var - 1.0) > var_tol, "broken twin (scale) passed: variance %g", var);

    /* Batched rows: the same moments. */
    ebm__stream s = ebm__rng_take_stream(r);
    for (int64_t row = 0; row < n / 1000; row++) {
        ebm__stream_normal(&s, (uint32_t)row, 0, 1000, z + row * 1000);
    }
    normal_moments(z, n, 0.0, 1.0, &mean, &var);
    ck_assert_msg(fabs(mean) < mean_tol, "rows: mean %g", mean);
    ck_assert_msg(fabs(var - 1.0) < var_tol, "rows: variance %g", var);
    ebm_rng_destroy(r);
    free(z);
}
END_TEST

/* Normals binned by their CDF into 100 equiprobable bins (same limit as the
 * uniforms). Broken twin: normals scaled by 1.02, noncentrality about 780 at
 * 1e6 draws. Odd fill sizes exercise the spare. */
START_TEST(test_normal_chi_square)
{
    int64_t n = stat_draws();
    float *z = t_floats(n);
    int *bins = malloc((size_t)n * sizeof *bins);
    ck_assert_ptr_nonnull(bins);
    ebm_rng_t *r = t_rng(2026, 0);
    for (int64_t at = 0; at < n; at += 999) {
        int64_t len = (n - at < 999) ? n - at : 999;
        ck_assert_int_eq(ebm_rng_normal(r, len, z + at), EBM_OK);
    }
    double chi2 = normal_chi_square(z, n, bins);
    ck_assert_msg(chi2 < CHI2_LIMIT, "fill: chi-square %g", chi2);

    for (int64_t i = 0; i < n; i++) {
        z[i] *= 1.02f;
    }
    double broken = normal_chi_square(z, n, bins);
    ck_assert_msg(broken > CHI2_LIMIT, "broken twin passed: chi-square %g", broken);

    ebm__stream s = ebm__rng_take_stream(r);
    for (int64_t row = 0; row < n / 1000; row++) {
        ebm__stream_normal(&s, (uint32_t)row, 0, 1000, z + row * 1000);
    }
    chi2 = normal_chi_square(z, n, bins);
    ck_assert_msg(chi2 < CHI2_LIMIT, "rows: chi-square %g", chi2);
    ebm_rng_destroy(r);
    free(z);
    free(bins);
}
END_TEST

/* ---- bad input ---------------------------------------------------------------- */

START_TEST(test_bad_input)
{
    ebm_rng_t *sentinel = (ebm_rng_t *)&sentinel; /* never dereferenced */
    ebm_rng_t *out = sentinel;
    ck_assert_int_eq(ebm_rng_create(NULL, 1, 2), EBM_ENULL);
    ck_assert_int_eq(ebm_rng_derive(&out, NULL, 0), EBM_ENULL);
    ck_assert_ptr_null(out); /* *out is NULL on failure */

    ebm_rng_t *r = t_rng(1, 2);
    uint64_t before[EBM_RNG_STATE_WORDS], after[EBM_RNG_STATE_WORDS];
    float skip[3];
    ck_assert_int_eq(ebm_rng_normal(r, 3, skip), EBM_OK);
    get_state(r, before);
    ck_assert_str_eq(ebm_rng_errmsg(r), "");

    /* Calls on a const generator leave their message in it too. */
    ck_assert_int_eq(ebm_rng_derive(NULL, r, 0), EBM_ENULL);
    ck_assert_str_eq(ebm_rng_errmsg(r), "out is NULL");
    ck_assert_int_eq(ebm_rng_get_state(r, NULL), EBM_ENULL);
    ck_assert_str_eq(ebm_rng_errmsg(r), "state is NULL");
    ck_assert_int_eq(ebm_rng_get_state(NULL, after), EBM_ENULL);

    ck_assert_int_eq(ebm_rng_set_state(NULL, before), EBM_ENULL);
    ck_assert_int_eq(ebm_rng_set_state(r, NULL), EBM_ENULL);
    ck_assert_str_eq(ebm_rng_errmsg(r), "state is NULL");

    float buf[8], canary[8];
    for (int i = 0; i < 8; i++) {
        buf[i] = canary[i] = -7.0f;
    }
    fill_fn fills[2] = {ebm_rng_uniform, ebm_rng_normal};
    for (int f = 0; f < 2; f++) {
        ck_assert_int_eq(fills[f](r, -3, buf), EBM_ESHAPE);
        ck_assert_str_eq(ebm_rng_errmsg(r), "n is -3; it must be >= 0");
        ck_assert_int_eq(fills[f](r, INT64_MIN, buf), EBM_ESHAPE);
        ck_assert_str_eq(ebm_rng_errmsg(r), "n is -9223372036854775808; it must be >= 0");
        ck_assert_int_eq(fills[f](r, 5, NULL), EBM_ENULL);
        ck_assert_str_eq(ebm_rng_errmsg(r), "out is NULL (n is 5)");
        ck_assert_int_eq(fills[f](NULL, 5, buf), EBM_ENULL);
        ck_assert_mem_eq(buf, canary, sizeof buf);

        /* n = 0 with out NULL is fine, changes nothing, keeps the last message. */
        ck_assert_int_eq(fills[f](r, 0, NULL), EBM_OK);
        ck_assert_str_eq(ebm_rng_errmsg(r), "out is NULL (n is 5)");
        get_state(r, after);
        assert_states_equal(before, after);
    }

    ck_assert_str_eq(ebm_rng_errmsg(NULL), "rng is NULL");
    ebm_rng_destroy(NULL);
    ebm_rng_destroy(r);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Bad input: messages, nothing changed                                     */
/* ------------------------------------------------------------------------ */

START_TEST(rng_bad_input)
{
    ebm_rng_t *r = g_rng, *twin = t_fresh_rng();
    uint64_t st[EBM_RNG_STATE_WORDS], good[EBM_RNG_STATE_WORDS], bad[EBM_RNG_STATE_WORDS];
    float buf[16];
    char hex[32];
    t_sentinel(st, sizeof st);
    t_sentinel(buf, sizeof buf);
    ck_assert_int_eq(ebm_rng_get_state(r, good), EBM_OK);

    /* NULL handles and NULL out pointers: no generator to hold a message. */
    t_snap s;
    t_snap_init(&s, T_MSG_NONE, NULL, r);
    t_snap_track(&s, "state", st, sizeof st);
    t_snap_track(&s, "out", buf, sizeof buf);
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_rng_create(NULL, 1, 2));
    ebm_rng_t *child = NULL;
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_rng_derive(&child, NULL, 3));
    CHECK(child == NULL, "ebm_rng_derive(&child, NULL, 3) wrote child");
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_rng_get_state(NULL, st));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_rng_set_state(NULL, good));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_rng_uniform(NULL, 4, buf));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_rng_normal(NULL, 4, buf));
    CHECK(ebm_rng_errmsg(NULL) != NULL, "ebm_rng_errmsg(NULL) is NULL");
    ebm_rng_destroy(NULL);

    /* Calls on r: message in ebm_rng_errmsg(r), r unchanged. */
    s.src = T_MSG_RNG;
    FAILS(&s, EBM_ENULL, "state", NULL, ebm_rng_set_state(r, NULL));
    memcpy(bad, good, sizeof bad);
    bad[5] ^= 1; /* a wrong tag */
    snprintf(hex, sizeof hex, "%016" PRIx64, bad[5]);
    FAILS(&s, EBM_EVALUE, "state", hex, ebm_rng_set_state(r, bad));
    memset(bad, 0, sizeof bad); /* all zero: no tag at all */
    FAILS(&s, EBM_EVALUE, "state", NULL, ebm_rng_set_state(r, bad));
    memcpy(bad, good, sizeof bad);
    bad[3] = 2; /* has_spare is not 0 or 1 */
    FAILS(&s, EBM_EVALUE, "state[3]", "2", ebm_rng_set_state(r, bad));
    memcpy(bad, good, sizeof bad);
    double nan_spare = NAN;
    bad[3] = 1;
    memcpy(&bad[4], &nan_spare, sizeof nan_spare);
    FAILS(&s, EBM_EVALUE, "state[4]", NULL, ebm_rng_set_state(r, bad));
    memcpy(bad, good, sizeof bad);
    bad[3] = 0;
    bad[4] = 0x3ff0000000000000ULL; /* a spare value without has_spare: never written */
    FAILS(&s, EBM_EVALUE, "state[4]", NULL, ebm_rng_set_state(r, bad));

    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_rng_uniform(r, -1, buf));
    FAILS(&s, EBM_ESHAPE, "n", "-9223372036854775808", ebm_rng_uniform(r, INT64_MIN, buf));
    FAILS(&s, EBM_ESHAPE, "n", "-3", ebm_rng_normal(r, -3, buf));
    FAILS(&s, EBM_ENULL, "out", NULL, ebm_rng_uniform(r, 5, NULL));
    FAILS(&s, EBM_ENULL, "out", NULL, ebm_rng_normal(r, 5, NULL));
    /* n = 0 with NULL is a valid empty fill: it consumes nothing. */
    NOOP(&s, ebm_rng_uniform(r, 0, NULL));
    NOOP(&s, ebm_rng_normal(r, 0, NULL));

    /* Not poisoned: r still draws exactly what its twin draws. */
    float x1[5], x2[5];
    ck_assert_int_eq(ebm_rng_normal(r, 5, x1), EBM_OK);
    ck_assert_int_eq(ebm_rng_normal(twin, 5, x2), EBM_OK);
    CHECK(memcmp(x1, x2, sizeof x1) == 0, "normals after failed calls differ from the twin's");
    ck_assert_int_eq(ebm_rng_uniform(r, 5, x1), EBM_OK);
    ck_assert_int_eq(ebm_rng_uniform(twin, 5, x2), EBM_OK);
    CHECK(memcmp(x1, x2, sizeof x1) == 0, "uniforms after failed calls differ from the twin's");
    ck_assert_int_eq(ebm_rng_set_state(r, good), EBM_OK);
    CHECK(t_rng_hash(r) == t_checksum(good, sizeof good), "set_state(good) after failures");

    /* A fresh generator has the empty message. */
    ebm_rng_t *f = NULL;
    ck_assert_int_eq(ebm_rng_create(&f, 1, 1), EBM_OK);
    CHECK(ebm_rng_errmsg(f) != NULL && ebm_rng_errmsg(f)[0] == '\0',
          "a fresh generator's message is not \"\"");
    ebm_rng_destroy(f);
    ebm_rng_destroy(twin);
    FINISH();
}
END_TEST

/* get_state(r, NULL) and derive(NULL, r, i) are calls on a generator that
 * fail: the header promises a message in ebm_rng_errmsg(r) for every failure. */
START_TEST(rng_const_calls_leave_message)
{
    ebm_rng_t *r = g_rng;
    t_snap s;
    t_snap_init(&s, T_MSG_RNG, NULL, r);
    FAILS(&s, EBM_ENULL, "state", NULL, ebm_rng_get_state(r, NULL));
    FAILS(&s, EBM_ENULL, "out", NULL, ebm_rng_derive(NULL, r, 3));
    FINISH();
}
END_TEST

Suite *ebm_rng_suite(void)
{
    const t_test tests[] = {
        {"known answers", test_philox_known_answers, 0, 30, NULL, NULL},
        {"known answers", test_splitmix64_known_answers, 0, 30, NULL, NULL},
        {"known answers", test_own_known_answers, 0, 30, NULL, NULL},
        {"layout", test_fill_layout, 0, 30, NULL, NULL},
        {"layout", test_stream_layout, 0, 30, NULL, NULL},
        {"streams", test_same_seed_same_bytes, 0, 30, NULL, NULL},
        {"streams", test_different_seeds_differ, 0, 30, NULL, NULL},
        {"streams", test_derive, 0, 30, NULL, NULL},
        {"checkpoints", test_split_fills, 0, 30, NULL, NULL},
        {"checkpoints", test_state_round_trip, 0, 30, NULL, NULL},
        {"checkpoints", test_set_state_rejects, 0, 30, NULL, NULL},
        {"batched", test_take_stream, 0, 30, NULL, NULL},
        {"batched", test_take_streams, 0, 30, NULL, NULL},
        {"batched", test_stream_rows_independent, 0, 30, NULL, NULL},
        {"statistics", test_uniform_chi_square, 0, 30, NULL, NULL},
        {"statistics", test_normal_moments, 0, 30, NULL, NULL},
        {"statistics", test_normal_chi_square, 0, 30, NULL, NULL},
        {"bad input", test_bad_input, 0, 30, t_fixture_setup, t_fixture_teardown},
        {"bad input", rng_bad_input, 0, 30, t_fixture_setup, t_fixture_teardown},
        {"bad input", rng_const_calls_leave_message, 0, 30, t_fixture_setup, t_fixture_teardown},
    };
    return t_suite("rng", tests, sizeof tests / sizeof tests[0]);
}
