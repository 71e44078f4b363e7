/*
 * Global moves: the independence Metropolis-Hastings move of
 * EBM_SAMPLER_GLOBAL_PROB, single and coupled (global.h;
 * docs/global_moves.md has the derivation).
 *
 * The state x = (e, o): e the even layers (the visible layer and a DBM's
 * hidden even layers), o the odd ones. The target's marginal of e is
 * p(e) ~ exp(-F(e)), F = F_S with S the odd layers summed out
 * (ebm_model_free_energy; Taniguchi eq. 22 for a DBM, the visible free
 * energy of an RBM). A move proposes e' ~ q, independent of x, then o' ~
 * p(o | e'), and accepts iff
 *
 *     log u < F(e) - F(e') + log q(e) - log q(e'),
 *
 * the Metropolis-Hastings ratio of the joint proposal q(e') p(o' | e'),
 * in which the p(o | e) terms cancel: the move keeps p(x). Its q:
 *  - the visible layer: q(v') = (1/N) sum_n prod_i k(v'_i | c_n,i) over the
 *    proposal rows c_n, k = 1 - eps where v'_i = c_n,i, else eps (binary
 *    and spin: the flip) or eps / (Q - 1) (a Potts site: each of the other
 *    Q - 1 categories). By the Hamming distance d_n of v' to c_n over its D
 *    units (sites): log q(v') = -log N + lse_n (d_n log(eps / (Q - 1)) +
 *    (D - d_n) log(1 - eps)), the distances popcounts of the rows' bits
 *    against the proposal rows', the sum's terms from a table of the D + 1
 *    powers of their ratio;
 *  - a DBM's hidden even layer l >= 2: an upward pass that ignores the
 *    layers above, h_l' ~ prod_j p(h_lj | a_l), a_l the input of layer l
 *    from the means m_{l-1} = E[h_{l-1} | a_{l-1}] of layer l - 1 given
 *    h_{l-2}' alone (m_1 from v'). So q(e) = q(v) prod_{l even >= 2}
 *    p(h_l | a_l(h_{l-2})), which the same pass evaluates at the current
 *    state.
 * The draws: row r's coin, row choice and acceptance uniform are one
 * Philox block of its stream row; the row is chosen from 64 bits and the
 * flips compare 32-bit words with eps rounded up to a multiple of 2^-32
 * (the eps that log q uses), so the proposal is the law log q describes to
 * 2^-64 (the row) and 2^-32 (a Potts site's new category).
 *
 * Coupled: both chains take the same coin, the same e' and o' (drawn from
 * the row's stream) and the same u; each decides with its own state. Where
 * both accept, they meet; chains equal on entry make one decision.
 */
#include "conditional.h"
#include "energy.h"
#include "error.h"
#include "global.h"
#include "kernels.h"
#include "model.h"
#include "rng.h"
#include "scratch.h"
#include "threads.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The streams a step with global moves takes, always this many: each
 * row's block (coin, row, acceptance), the visible flips, and the draws of
 * layer l (the upward pass's even layers, the odd layers) from ST_LAYER + l. */
enum { ST_ROW = 0, ST_FLIP = 1, ST_LAYER = 2, ST_COUNT = ST_LAYER + EBM_MAX_LAYERS };

/* log q of the visible layer takes this many rows at a time: their sums
 * over the proposal rows are independent chains of additions. */
enum { Q_ROWS = 8 };

int ebm__global_supported(const ebm_model_t *m, ebm__msg *msg)
{
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (ebm__is_gaussian(m, l) || ebm__is_drelu(m, l)) {
            return ebm__fail(msg, EBM_EUNSUPPORTED,
                             "global moves need discrete layers; layer %lld has %s units, for "
                             "which there is no proposal kernel around the rows yet",
                             (long long)l, ebm__is_gaussian(m, l) ? "Gaussian" : "dReLU");
        }
    }
    return EBM_OK;
}

void ebm__global_row_bits(const ebm_model_t *m, int64_t n, const float *rows, int64_t ld,
                          uint64_t *bits)
{
    const int64_t n0 = m->size[0], words = ebm__global_bit_words(n0);
    for (int64_t r = 0; r < n; r++) {
        uint64_t *b = bits + r * words;
        memset(b, 0, (size_t)words * sizeof *b);
        for (int64_t j = 0; j < n0; j++) {
            b[j / 64] |= (uint64_t)(rows[r * ld + j] > 0.0f) << (j % 64);
        }
    }
}

/* A step's work: the rows' blocks and lists, the gathered rows, the global
 * rows' proposals and current states, the upward pass, layer inputs,
 * distances, log q and F of the proposals, x and y ([3 n] each, in that
 * order), the free energies' scratch, the decisions. */
typedef struct global_work {
    const ebm__kernel_in *k;
    const ebm_model_t *m;
    int64_t n, w;
    int coupled;
    uint32_t *blocks;
    int64_t *global_rows, *sweep_rows, *global_ids, *sweep_ids;
    float *sweep_x, *sweep_y, *prop, *cur_x, *cur_y, *t, *a;
    double *logq, *f, *ferr, *fwork, *powers;
    uint8_t *exact; /* [3 chunks]: 1 where a chunk of f holds the exact path's values */
    int64_t rechecks; /* chunks computed again by the exact path */
    int32_t *dist;
    uint64_t *bits;
    uint8_t *accept;
} global_work;

static void global_layout(ebm__arena *arena, void *ctx)
{
    global_work *wk = ctx;
    const size_t n = (size_t)wk->n, nw = (size_t)(wk->n * wk->w), f = sizeof(float);
    wk->blocks = ebm__arena_take(arena, 4 * n, sizeof(uint32_t));
    wk->global_rows = ebm__arena_take(arena, n, sizeof(int64_t));
    wk->sweep_rows = ebm__arena_take(arena, n, sizeof(int64_t));
    wk->global_ids = ebm__arena_take(arena, n, sizeof(int64_t));
    wk->sweep_ids = ebm__arena_take(arena, n, sizeof(int64_t));
    wk->sweep_x = ebm__arena_take(arena, nw, f);
    wk->sweep_y = wk->coupled ? ebm__arena_take(arena, nw, f) : NULL;
    wk->prop = ebm__arena_take(arena, nw, f);
    wk->cur_x = ebm__arena_take(arena, nw, f);
    wk->cur_y = wk->coupled ? ebm__arena_take(arena, nw, f) : NULL;
    wk->t = ebm__arena_take(arena, nw, f);
    wk->a = ebm__arena_take(arena, (size_t)(wk->n * wk->m->max_size), f);
    wk->dist = ebm__arena_take(arena, (size_t)(Q_ROWS * wk->k->proposal->n_rows), sizeof(int32_t));
    wk->bits = ebm__arena_take(arena, (size_t)(Q_ROWS * ebm__global_bit_words(wk->m->size[0])),
                               sizeof(uint64_t));
    wk->logq = ebm__arena_take(arena, 3 * n, sizeof(double));
    wk->f = ebm__arena_take(arena, 3 * n, sizeof(double));
    wk->ferr = ebm__arena_take(arena, 3 * n, sizeof(double));
    wk->exact = ebm__arena_take(arena, 3 * (n / EBM__CHUNK + 1), 1);
    wk->fwork = ebm__arena_take(arena, (size_t)ebm__free_energy_scratch(wk->m, EBM__CHUNK),
                                sizeof(double));
    wk->accept = ebm__arena_take(arena, 2 * n, 1);
    wk->powers = ebm__arena_take(arena, (size_t)(wk->m->size[0] + 1), sizeof(double));
}

/* The high 64 bits of a * b: a uniform 64-bit a picks floor(a b / 2^64). */
static uint64_t mul_hi64(uint64_t a, uint64_t b)
{
    const uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* The flip threshold of eps: a unit flips iff its 32-bit word < T, so with
 * probability T / 2^32, eps rounded up (and kept below 1). */
static uint64_t flip_threshold(double eps)
{
    const double t = ceil(eps * 4294967296.0);
    return t >= 4294967296.0 ? UINT64_C(4294967295) : (uint64_t)t;
}

/* Word j of row id's part of stream s. */
static uint32_t stream_word(const ebm__stream *s, uint32_t id, uint64_t j)
{
    uint32_t b[4];
    ebm__stream_block(s, id, j & ~(uint64_t)3, b);
    return b[j & 3];
}

/* The visible layer of the ng proposals (rows of prop, stride w, zeroed):
 * the chosen proposal row with each unit (Potts site) changed with
 * probability eps. A Potts site's flip is word j of the flip stream, its
 * new category word base + j. */
static void propose_visible(const global_work *wk, const ebm__stream *st, int64_t ng)
{
    const ebm_model_t *m = wk->m;
    const ebm__proposal *pr = wk->k->proposal;
    const int64_t n0 = m->size[0], q = ebm__is_potts(m, 0) ? m->categories[0] : 1;
    const int64_t sites = n0 / q, base = (sites + 3) & ~(int64_t)3;
    const uint64_t T = flip_threshold(pr->flip_prob);
    const int spin = m->units[0] == EBM_UNITS_SPIN;
    for (int64_t i = 0; i < ng; i++) {
        const uint32_t *b = wk->blocks + 4 * wk->global_rows[i];
        const uint32_t id = (uint32_t)wk->global_ids[i];
        const uint64_t pick = (uint64_t)b[1] << 32 | b[2];
        const int64_t c = (int64_t)mul_hi64(pick, (uint64_t)pr->n_rows);
        float *v = wk->prop + i * wk->w;
        memcpy(v, pr->rows + c * n0, (size_t)n0 * sizeof *v);
        uint32_t words[4];
        for (int64_t j = 0; j < sites; j++) {
            if ((j & 3) == 0) {
                ebm__stream_block(&st[ST_FLIP], id, (uint64_t)j, words);
            }
            if ((uint64_t)words[j & 3] >= T) {
                continue;
            }
            if (q == 1) {
                v[j] = spin ? -v[j] : 1.0f - v[j];
                continue;
            }
            float *site = v + j * q;
            int64_t cur = 0;
            while (site[cur] == 0.0f) {
                cur++;
            }
            const uint32_t wc = stream_word(&st[ST_FLIP], id, (uint64_t)(base + j));
            int64_t nc = (int64_t)(((uint64_t)wc * (uint64_t)(q - 1)) >> 32);
            nc += nc >= cur;
            site[cur] = 0.0f;
            site[nc] = 1.0f;
        }
    }
}

/* log q of the hidden even layers of a DBM (the upward pass) at the ng
 * rows of s (stride w), added to logq; draw: draw those layers of s from
 * q first (layer l from stream ST_LAYER + l). Returns 0 if a layer input
 * overflowed float. */
static int upward_pass(const global_work *wk, const ebm__stream *st, int64_t ng, float *s,
                       int draw, double *logq)
{
    const ebm_model_t *m = wk->m;
    const int64_t w = wk->w;
    float *t = wk->t, *a = wk->a;
    if (m->n_layers < 3) {
        return 1; /* no hidden even layer */
    }
    memset(t, 0, (size_t)(ng * w) * sizeof *t);
    for (int64_t r = 0; r < ng; r++) {
        memcpy(t + r * w, s + r * w, (size_t)m->size[0] * sizeof *t);
    }
    /* t holds layers below l (the odd ones as means) and zeros above, so
     * that layer l's input ignores the layers above it */
    for (int64_t l = 1; l < m->n_layers - 1 + (m->n_layers % 2); l++) {
        const int64_t nl = m->size[l], off = m->column[l];
        ebm__layer_input(m, l, ng, t, w, a, nl);
        if (!ebm__kern()->values_ok(ng * nl, a, EBM_UNITS_GAUSSIAN)) {
            return 0;
        }
        if (l % 2 == 1) {
            ebm__mean_from_input(m, l, ng, a, nl);
        } else {
            if (draw) {
                ebm__sample_from_input(m, l, &st[ST_LAYER + l], wk->global_ids, 0, ng, a, nl,
                                       s + off, w);
            }
            ebm__add_layer_logprob(m, l, ng, a, nl, s + off, w, logq);
        }
        for (int64_t r = 0; r < ng; r++) {
            memcpy(t + r * w + off, l % 2 == 1 ? a + r * nl : s + r * w + off,
                   (size_t)nl * sizeof *t);
        }
    }
    return 1;
}

/* The odd layers of the ng proposals given their even layers, layer l from
 * stream ST_LAYER + l. Returns 0 if a layer input overflowed float. */
static int draw_odd(const global_work *wk, const ebm__stream *st, int64_t ng)
{
    const ebm_model_t *m = wk->m;
    for (int64_t l = 1; l < m->n_layers; l += 2) {
        const int64_t nl = m->size[l];
        ebm__layer_input(m, l, ng, wk->prop, wk->w, wk->a, nl);
        if (!ebm__kern()->values_ok(ng * nl, wk->a, EBM_UNITS_GAUSSIAN)) {
            return 0;
        }
        ebm__sample_from_input(m, l, &st[ST_LAYER + l], wk->global_ids, 0, ng, wk->a, nl,
                               wk->prop + m->column[l], wk->w);
    }
    return 1;
}

/* log q of the visible layer of the ng rows of s (stride w), added to
 * logq: the Hamming distances to every proposal row (popcounts of the
 * rows' bits, exact), then a log-sum-exp over the proposal rows. Term n is
 * D log(1 - eps) + d_n g, g = log(eps / (Q - 1)) - log(1 - eps); the sum
 * is taken relative to its largest term (the least d_n if g <= 0, else the
 * largest), so that each term is a power r^k <= 1, k = |d_n - d*|, r =
 * exp(-|g|), from the table wk->powers, added in the order of the proposal
 * rows. Q_ROWS rows at a time. */
static void log_q_visible(const global_work *wk, int64_t ng, const float *s, double *logq)
{
    const ebm_model_t *m = wk->m;
    const ebm__proposal *pr = wk->k->proposal;
    const int64_t N = pr->n_rows, n0 = m->size[0], words = ebm__global_bit_words(n0);
    const int potts = ebm__is_potts(m, 0);
    const int64_t q = potts ? m->categories[0] : 1, D = n0 / q;
    const double eps = (double)flip_threshold(pr->flip_prob) / 4294967296.0;
    const double log_near = log1p(-eps), log_far = log(eps / (double)(potts ? q - 1 : 1));
    const double g = log_far - log_near, log_n = log((double)N);
    double *powers = wk->powers;
    for (int64_t k = 0; k <= D; k++) {
        powers[k] = exp(-(double)k * fabs(g));
    }
    for (int64_t i0 = 0; i0 < ng; i0 += Q_ROWS) {
        const int64_t rows = ng - i0 < Q_ROWS ? ng - i0 : Q_ROWS;
        ebm__global_row_bits(m, rows, s + i0 * wk->w, wk->w, wk->bits);
        ebm__kern()->hamming(rows, N, words, wk->bits, pr->bits, potts, wk->dist);
        int32_t top[Q_ROWS];
        for (int64_t r = 0; r < rows; r++) {
            int32_t lo = INT32_MAX, hi = 0;
            for (int64_t c = 0; c < N; c++) {
                const int32_t d = wk->dist[c * rows + r];
                lo = d < lo ? d : lo;
                hi = d > hi ? d : hi;
            }
            top[r] = g <= 0.0 ? lo : hi;
        }
        double sum[Q_ROWS] = {0.0};
        for (int64_t c = 0; c < N; c++) {
            const int32_t *d = wk->dist + c * rows;
            for (int64_t r = 0; r < rows; r++) {
                sum[r] += powers[d[r] > top[r] ? d[r] - top[r] : top[r] - d[r]];
            }
        }
        for (int64_t r = 0; r < rows; r++) {
            logq[i0 + r] += (double)D * log_near + (double)top[r] * g + log(sum[r]) - log_n;
        }
    }
}

/* The free energies' summed-out layers: the odd ones; under
 * EBM__GLOBAL_TWIN_NO_SUMMED none (the energy with the odd layers at 0
 * instead: the twin), s then copied to wk->t with those layers zeroed. */
static uint32_t summed_layers(const global_work *wk, int64_t ng, const float **s)
{
    const ebm_model_t *m = wk->m;
    if (wk->k->settings->twin_global != EBM__GLOBAL_TWIN_NO_SUMMED) {
        return ebm__unclamped_layers(m, 0, 1);
    }
    memcpy(wk->t, *s, (size_t)(ng * wk->w) * sizeof **s);
    for (int64_t l = 1; l < m->n_layers; l += 2) {
        for (int64_t r = 0; r < ng; r++) {
            memset(wk->t + r * wk->w + m->column[l], 0, (size_t)m->size[l] * sizeof **s);
        }
    }
    *s = wk->t;
    return 0;
}

/* Rows [r0, r0 + rows) of f by the double path (ebm__free_energy_chunk),
 * err 0 there. */
static void double_chunk(const global_work *wk, uint32_t sum_out, const float *s, int64_t r0,
                         int64_t rows, double *f, double *err)
{
    ebm__free_energy_chunk(wk->m, sum_out, rows, s + r0 * wk->w, wk->w, f + r0, wk->fwork);
    memset(err + r0, 0, (size_t)rows * sizeof *err);
}

/* f = F(e) of the ng rows of s, in chunks of EBM__CHUNK rows: within err
 * of the exact path's values (ebm__free_energy_bounded), exact[c] = 0 for
 * each chunk c; on the plain path (settings.plain_energies) the exact
 * values, err 0, exact[c] = 1. shift: the broken twin's move of f. */
static void free_energies(const global_work *wk, int64_t ng, const float *s, double *f,
                          double *err, uint8_t *exact, double shift)
{
    const int plain = wk->k->settings->plain_energies;
    const uint32_t sum_out = summed_layers(wk, ng, &s);
    for (int64_t r0 = 0; r0 < ng; r0 += EBM__CHUNK) {
        const int64_t rows = ng - r0 < EBM__CHUNK ? ng - r0 : EBM__CHUNK;
        if (plain) {
            double_chunk(wk, sum_out, s, r0, rows, f, err);
        } else {
            ebm__free_energy_bounded(wk->m, sum_out, rows, s + r0 * wk->w, wk->w, f + r0,
                                     err + r0, wk->fwork);
            for (int64_t r = r0; r < r0 + rows; r++) {
                f[r] += shift;
            }
        }
        exact[r0 / EBM__CHUNK] = (uint8_t)plain;
    }
}

/* Row i's chunk of f (rows of s) by the exact path, err 0, if not yet. */
static void exact_chunk(global_work *wk, int64_t ng, const float *s, int64_t i, double *f,
                        double *err, uint8_t *exact)
{
    const int64_t c = i / EBM__CHUNK, r0 = c * EBM__CHUNK;
    if (exact[c]) {
        return;
    }
    const int64_t rows = ng - r0 < EBM__CHUNK ? ng - r0 : EBM__CHUNK;
    const uint32_t sum_out = summed_layers(wk, ng, &s);
    double_chunk(wk, sum_out, s, r0, rows, f, err);
    exact[c] = 1;
    wk->rechecks++;
}

/* The global moves' free energies of the ng rows of one side: rows, F, its
 * bound and chunk flags, log q. */
typedef struct side {
    const float *s;
    double *f, *err, *lq;
    uint8_t *exact;
} side;

/* Row i's decision, log u < F(cur) - F(prop) + log q(cur) - log q(prop)
 * (use_q: with the log q terms), as the exact free energies make it: from
 * the bounded ones where every value within their bounds decides alike,
 * else from the exact values of both rows' chunks (a NaN ratio rejects). */
static int decide(global_work *wk, int64_t ng, int64_t i, double log_u, int use_q,
                  const side *cur, const side *prop)
{
    for (;;) {
        const double df = cur->f[i] - prop->f[i];
        const double d = df + (use_q ? cur->lq[i] - prop->lq[i] : 0.0);
        if (cur->exact[i / EBM__CHUNK] && prop->exact[i / EBM__CHUNK]) {
            return log_u < d;
        }
        /* each of the two roundings adds at most 2^-52 of its operands */
        const double margin = (cur->err[i] + prop->err[i]) * (1.0 + 0x1p-50) +
                              0x1p-50 * (fabs(df) + fabs(d));
        if (log_u < d - margin) {
            return 1;
        }
        if (log_u >= d + margin) {
            return 0;
        }
        exact_chunk(wk, ng, cur->s, i, cur->f, cur->err, cur->exact);
        exact_chunk(wk, ng, prop->s, i, prop->f, prop->err, prop->exact);
    }
}

/* log q of the ng rows of s into logq; draw: s are the proposals, whose
 * hidden even layers are drawn first. Returns 0 on overflow. */
static int log_q(const global_work *wk, const ebm__stream *st, int64_t ng, float *s, int draw,
                 double *logq)
{
    memset(logq, 0, (size_t)ng * sizeof *logq);
    if (!upward_pass(wk, st, ng, s, draw, logq)) {
        return 0;
    }
    log_q_visible(wk, ng, s, logq);
    return 1;
}

int ebm__global_begin(const ebm__kernel_in *k, ebm__global_split *g, ebm__msg *msg,
                      ebm_rng_t *rng, const int64_t *ids, int64_t n, const float *x, int64_t ldx,
                      const float *y, int64_t ldy)
{
    const ebm_model_t *m = k->m;
    const int64_t w = m->width;
    global_work wk = {.k = k, .m = m, .n = n, .w = w, .coupled = y != NULL};
    if (ebm__arena_layout(k->global_scratch, global_layout, &wk) != 0) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for the global moves of %lld rows",
                         (long long)n);
    }
    ebm__stream st[ST_COUNT];
    ebm__rng_take_streams(rng, ST_COUNT, st);
    int64_t ng = 0, ns = 0;
    for (int64_t r = 0; r < n; r++) {
        const uint32_t id = ebm__row_id(ids, r);
        uint32_t *b = wk.blocks + 4 * r;
        ebm__stream_block(&st[ST_ROW], id, 0, b);
        if ((double)ebm__u32_to_float(b[0]) < k->settings->global_prob) {
            memcpy(wk.cur_x + ng * w, x + r * ldx, (size_t)w * sizeof *x);
            if (y != NULL) {
                memcpy(wk.cur_y + ng * w, y + r * ldy, (size_t)w * sizeof *y);
            }
            wk.global_rows[ng] = r;
            wk.global_ids[ng++] = id;
        } else {
            memcpy(wk.sweep_x + ns * w, x + r * ldx, (size_t)w * sizeof *x);
            if (y != NULL) {
                memcpy(wk.sweep_y + ns * w, y + r * ldy, (size_t)w * sizeof *y);
            }
            wk.sweep_rows[ns] = r;
            wk.sweep_ids[ns++] = id;
        }
    }
    *g = (ebm__global_split){.n_sweep = ns, .sweep_ids = wk.sweep_ids, .sweep_x = wk.sweep_x,
                             .sweep_y = wk.sweep_y, .n_global = ng, .width = w,
                             .global_rows = wk.global_rows, .sweep_rows = wk.sweep_rows,
                             .proposal = wk.prop, .accept = wk.accept};
    if (ng == 0) {
        return EBM_OK;
    }
    /* The proposals: e' ~ q, then o' ~ p(o | e'); log q and F of them and
     * of the current states. */
    double *lq_p = wk.logq, *lq_x = wk.logq + n, *lq_y = wk.logq + 2 * n;
    double *f_p = wk.f, *f_x = wk.f + n, *f_y = wk.f + 2 * n;
    memset(wk.prop, 0, (size_t)(ng * w) * sizeof *wk.prop);
    propose_visible(&wk, st, ng);
    int ok = log_q(&wk, st, ng, wk.prop, 1, lq_p) && draw_odd(&wk, st, ng) &&
             log_q(&wk, st, ng, wk.cur_x, 0, lq_x) &&
             (y == NULL || log_q(&wk, st, ng, wk.cur_y, 0, lq_y));
    if (!ok) {
        return ebm__fail(msg, EBM_EVALUE, "a layer input of a global move overflowed to a "
                                          "non-finite value: the parameters are too large for "
                                          "float");
    }
    const int64_t chunks = n / EBM__CHUNK + 1;
    const side p = {wk.prop, f_p, wk.ferr, lq_p, wk.exact};
    const side sx = {wk.cur_x, f_x, wk.ferr + n, lq_x, wk.exact + chunks};
    const side sy = {wk.cur_y, f_y, wk.ferr + 2 * n, lq_y, wk.exact + 2 * chunks};
    const double shift =
        k->settings->twin_global == EBM__GLOBAL_TWIN_BOUND ? EBM__GLOBAL_TWIN_SHIFT : 0.0;
    free_energies(&wk, ng, p.s, p.f, p.err, p.exact, shift);
    free_energies(&wk, ng, sx.s, sx.f, sx.err, sx.exact, 0.0);
    if (y != NULL) {
        free_energies(&wk, ng, sy.s, sy.f, sy.err, sy.exact, 0.0);
    }
    /* The decisions: log u < F(x) - F(x') + log q(x) - log q(x'); a NaN
     * ratio rejects. Chains equal on entry make one decision. */
    const int use_q = k->settings->twin_global != EBM__GLOBAL_TWIN_NO_Q;
    int64_t accepted = 0, both = 0;
    for (int64_t i = 0; i < ng; i++) {
        const uint32_t *b = wk.blocks + 4 * wk.global_rows[i];
        const double log_u = log((double)ebm__u32_to_float(b[3])); /* -inf for u = 0 */
        const int ax = decide(&wk, ng, i, log_u, use_q, &sx, &p);
        int ay = 0;
        if (y != NULL) {
            ay = ebm__rows_equal(wk.cur_x + i * w, wk.cur_y + i * w, w)
                     ? ax
                     : decide(&wk, ng, i, log_u, use_q, &sy, &p);
        }
        wk.accept[2 * i] = (uint8_t)ax;
        wk.accept[2 * i + 1] = (uint8_t)ay;
        accepted += ax + ay;
        both += ax && ay;
    }
    g->accepted = accepted;
    g->both = both;
    g->rechecks = wk.rechecks;
    return EBM_OK;
}

/* The accepted proposals into the global rows of x (and y). */
static void write_global(const ebm__global_split *g, float *x, int64_t ldx, float *y, int64_t ldy)
{
    const int64_t w = g->width;
    for (int64_t i = 0; i < g->n_global; i++) {
        const int64_t r = g->global_rows[i];
        if (g->accept[2 * i]) {
            memcpy(x + r * ldx, g->proposal + i * w, (size_t)w * sizeof *x);
        }
        if (y != NULL && g->accept[2 * i + 1]) {
            memcpy(y + r * ldy, g->proposal + i * w, (size_t)w * sizeof *y);
        }
    }
}

/* The global moves' statistics (decisions: chains per row). */
static void global_stats(const ebm__global_split *g, ebm__kernel_out *out, int chains)
{
    const int64_t decisions = g->n_global * chains;
    out->global_decisions = decisions;
    out->energy_rechecks += g->rechecks;
    out->accept_rate = decisions > 0 ? (double)g->accepted / (double)decisions : 1.0;
    out->global_accept_rate = decisions > 0 ? (double)g->accepted / (double)decisions : NAN;
    if (chains == 2) {
        out->global_both_rate = g->n_global > 0 ? (double)g->both / (double)g->n_global : NAN;
    }
}

void ebm__global_end(const ebm__global_split *g, ebm__kernel_out *out, int64_t n, float *x,
                     int64_t ldx, float *y, int64_t ldy, uint8_t *met)
{
    const int64_t w = g->width;
    for (int64_t i = 0; i < g->n_sweep; i++) {
        const int64_t r = g->sweep_rows[i];
        memcpy(x + r * ldx, g->sweep_x + i * w, (size_t)w * sizeof *x);
        if (y != NULL) {
            memcpy(y + r * ldy, g->sweep_y + i * w, (size_t)w * sizeof *y);
        }
    }
    write_global(g, x, ldx, y, ldy);
    if (y != NULL) {
        int64_t n_met = 0;
        for (int64_t r = 0; r < n; r++) {
            const int equal = ebm__rows_equal(x + r * ldx, y + r * ldy, w);
            n_met += equal;
            if (met != NULL) {
                met[r] = (uint8_t)equal;
            }
        }
        out->met_fraction = (double)n_met / (double)n;
    }
    global_stats(g, out, y != NULL ? 2 : 1);
    out->hidden_input = NULL;
}

void ebm__global_apply(const ebm__global_split *g, ebm__kernel_out *out, float *x, int64_t ldx)
{
    write_global(g, x, ldx, NULL, 0);
    global_stats(g, out, 1);
}
