/* Training checkpoints: see checkpoint.h. */
#include "checkpoint.h"

#include "cli.h"

#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static const unsigned char magic[8] = {'E', 'B', 'M', 'C', 'K', 'P', 'T', '1'};
/* Version 1: no AVRG section; version 2: an AVRG section (checkpoint.h). */
enum { FORMAT_VERSION_MIN = 1, FORMAT_VERSION = 2, HEADER_BYTES = 16, SECTION_HEAD = 12,
       CRC_BYTES = 4 };

/* ------------------------------------------------------------------------ */
/* A growing byte buffer with little-endian writers                         */
/* ------------------------------------------------------------------------ */

typedef struct bytes {
    unsigned char *p;
    size_t n, cap;
    int failed;
} bytes;

static unsigned char *bytes_grow(bytes *b, size_t len)
{
    if (b->failed) {
        return NULL;
    }
    if (b->cap - b->n < len) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->n < len) {
            if (cap > SIZE_MAX / 2) {
                b->failed = 1;
                return NULL;
            }
            cap *= 2;
        }
        unsigned char *q = realloc(b->p, cap);
        if (q == NULL) {
            b->failed = 1;
            return NULL;
        }
        b->p = q;
        b->cap = cap;
    }
    unsigned char *at = b->p + b->n;
    b->n += len;
    return at;
}

static void put_u32(bytes *b, uint32_t v)
{
    unsigned char *q = bytes_grow(b, 4);
    for (int i = 0; q != NULL && i < 4; i++) {
        q[i] = (unsigned char)(v >> (8 * i));
    }
}

static void put_u64(bytes *b, uint64_t v)
{
    unsigned char *q = bytes_grow(b, 8);
    for (int i = 0; q != NULL && i < 8; i++) {
        q[i] = (unsigned char)(v >> (8 * i));
    }
}

static void put_f64(bytes *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    put_u64(b, u);
}

static void put_floats(bytes *b, const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], sizeof u);
        put_u32(b, u);
    }
}

/* Start a section; its length is patched by section_end. */
static size_t section_begin(bytes *b, const char tag[4])
{
    unsigned char *q = bytes_grow(b, 4);
    if (q != NULL) {
        memcpy(q, tag, 4);
    }
    const size_t at = b->n;
    put_u64(b, 0);
    return at;
}

static void section_end(bytes *b, size_t at)
{
    if (b->failed) {
        return;
    }
    const uint64_t len = (uint64_t)(b->n - at - 8);
    for (int i = 0; i < 8; i++) {
        b->p[at + (size_t)i] = (unsigned char)(len >> (8 * i));
    }
}

static uint32_t crc_of(const unsigned char *p, size_t n)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    while (n > 0) {
        const uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = crc32(crc, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return (uint32_t)crc;
}

/* ------------------------------------------------------------------------ */
/* Save                                                                     */
/* ------------------------------------------------------------------------ */

static int write_atomically(const char *path, const unsigned char *p, size_t n, char *err,
                            size_t err_size)
{
    const size_t len = strlen(path) + 8;
    char *tmp = malloc(len);
    if (tmp == NULL) {
        cli_set_error(err, err_size, "%s: out of memory", path);
        return CHECKPOINT_ENOMEM;
    }
    snprintf(tmp, len, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    int ok = f != NULL;
    ok = ok && fwrite(p, 1, n, f) == n;
    ok = ok && fflush(f) == 0;
    ok = ok && fsync(fileno(f)) == 0;
    const int saved = errno;
    if (f != NULL && fclose(f) != 0) {
        ok = 0;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = 0;
    }
    if (!ok) {
        cli_set_error(err, err_size, "%s: cannot write: %s", f == NULL ? tmp : path,
                strerror(errno ? errno : saved));
        remove(tmp);
    }
    free(tmp);
    return ok ? CHECKPOINT_OK : CHECKPOINT_EIO;
}

int checkpoint_save(const char *path, const ebm_model_t *m, const ebm_rng_t *rng,
                    const optim *o, const optim_average *avg, const ebm_estimator_t *e,
                    int64_t iteration, double seconds, const char *config, char *err,
                    size_t err_size)
{
    if (path == NULL || m == NULL || rng == NULL || o == NULL) {
        cli_set_error(err, err_size, "checkpoint_save: path, model, generator and optimiser are required");
        return CHECKPOINT_EARG;
    }
    bytes b = {NULL, 0, 0, 0};
    unsigned char *q = bytes_grow(&b, sizeof magic);
    if (q != NULL) {
        memcpy(q, magic, sizeof magic);
    }
    const int64_t n_chains = e != NULL ? ebm_estimator_num_chains(e) : 0;
    const int average = optim_average_on(avg);
    put_u32(&b, average ? FORMAT_VERSION : FORMAT_VERSION_MIN);
    put_u32(&b, 4u + (average != 0) + (n_chains > 0) + (config != NULL));

    /* MODL: the model file's bytes. */
    const int64_t model_size = ebm_model_save_size(m);
    size_t at = section_begin(&b, "MODL");
    q = bytes_grow(&b, (size_t)model_size);
    size_t written = 0;
    if (q != NULL && ebm_model_save_buffer(m, q, (size_t)model_size, &written) != EBM_OK) {
        free(b.p);
        cli_set_error(err, err_size, "checkpoint_save: ebm_model_save_buffer: %s", ebm_model_errmsg(m));
        return CHECKPOINT_EARG;
    }
    section_end(&b, at);

    uint64_t state[EBM_RNG_STATE_WORDS];
    ebm_rng_get_state(rng, state);
    at = section_begin(&b, "RNG ");
    for (int i = 0; i < EBM_RNG_STATE_WORDS; i++) {
        put_u64(&b, state[i]);
    }
    section_end(&b, at);

    at = section_begin(&b, "ITER");
    put_u64(&b, (uint64_t)iteration);
    put_f64(&b, seconds);
    section_end(&b, at);

    const int64_t n_opt = optim_buffer_floats(o);
    float *buf = n_opt > 0 ? malloc((size_t)n_opt * sizeof *buf) : NULL;
    int64_t step = 0;
    if (n_opt > 0 && buf == NULL) {
        b.failed = 1;
    } else {
        optim_state_get(o, &step, buf);
    }
    at = section_begin(&b, "OPTM");
    put_u64(&b, (uint64_t)step);
    put_u64(&b, (uint64_t)n_opt);
    put_floats(&b, buf, b.failed ? 0 : n_opt);
    section_end(&b, at);
    free(buf);

    if (average) {
        at = section_begin(&b, "AVRG");
        put_u64(&b, (uint64_t)avg->from);
        put_u64(&b, (uint64_t)avg->count);
        put_u64(&b, (uint64_t)avg->n);
        for (int64_t i = 0; i < avg->n; i++) {
            put_f64(&b, avg->mean[i]);
        }
        section_end(&b, at);
    }

    if (n_chains > 0) {
        const int64_t w = ebm_model_state_width(m);
        float *chains = malloc((size_t)(n_chains * w) * sizeof *chains);
        if (chains == NULL) {
            b.failed = 1;
        } else if (ebm_estimator_get_chains(e, chains, w) != EBM_OK) {
            cli_set_error(err, err_size, "checkpoint_save: ebm_estimator_get_chains: %s",
                    ebm_estimator_errmsg(e));
            free(chains);
            free(b.p);
            return CHECKPOINT_EARG;
        }
        at = section_begin(&b, "CHNS");
        put_u64(&b, (uint64_t)n_chains);
        put_u64(&b, (uint64_t)w);
        put_floats(&b, chains, chains != NULL ? n_chains * w : 0);
        section_end(&b, at);
        free(chains);
    }

    if (config != NULL) {
        const size_t len = strlen(config);
        at = section_begin(&b, "CONF");
        q = bytes_grow(&b, len);
        if (q != NULL) {
            memcpy(q, config, len);
        }
        section_end(&b, at);
    }

    if (!b.failed) {
        put_u32(&b, crc_of(b.p, b.n));
    }
    if (b.failed) {
        free(b.p);
        cli_set_error(err, err_size, "checkpoint_save: out of memory");
        return CHECKPOINT_ENOMEM;
    }
    const int rc = write_atomically(path, b.p, b.n, err, err_size);
    free(b.p);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Load                                                                     */
/* ------------------------------------------------------------------------ */

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static int get_floats(const unsigned char *p, uint64_t n, float **out)
{
    *out = NULL;
    if (n == 0) {
        return CHECKPOINT_OK;
    }
    float *x = malloc((size_t)n * sizeof *x);
    if (x == NULL) {
        return CHECKPOINT_ENOMEM;
    }
    for (uint64_t i = 0; i < n; i++) {
        const uint32_t u = get_u32(p + 4 * i);
        memcpy(&x[i], &u, sizeof u);
    }
    *out = x;
    return CHECKPOINT_OK;
}

static int read_file(const char *path, unsigned char **out, size_t *len, char *err,
                     size_t err_size)
{
    size_t size;
    const int fd = cli_open_file(path, &size, err, err_size);
    if (fd < 0) {
        return errno == EFBIG ? CHECKPOINT_ENOMEM : CHECKPOINT_EIO;
    }
    unsigned char *p = malloc(size > 0 ? size : 1);
    if (p == NULL) {
        close(fd);
        cli_set_error(err, err_size, "%s: out of memory (%zu bytes)", path, size);
        return CHECKPOINT_ENOMEM;
    }
    size_t got = 0;
    while (got < size) {
        const ssize_t r = read(fd, p + got, size - got);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            cli_set_error(err, err_size, "%s: short read (%zu of %zu bytes): %s", path, got, size,
                          r < 0 ? strerror(errno) : "the file shrank");
            free(p);
            close(fd);
            return CHECKPOINT_EIO;
        }
        got += (size_t)r;
    }
    close(fd);
    *out = p;
    *len = size;
    return CHECKPOINT_OK;
}

void checkpoint_free(checkpoint *c)
{
    if (c == NULL) {
        return;
    }
    ebm_model_destroy(c->model);
    free(c->opt_buffers);
    free(c->avg_mean);
    free(c->chains);
    free(c->config);
    memset(c, 0, sizeof *c);
}

/* Whether a step count read from a file is one checkpoint.h allows. */
static int step_ok(int64_t v)
{
    return v >= 0 && v <= CHECKPOINT_MAX_STEP;
}

/* Parse one section into c. */
static int parse_section(checkpoint *c, const char *path, const unsigned char tag[4],
                         const unsigned char *p, uint64_t len, char *err, size_t err_size)
{
    char name[5] = {(char)tag[0], (char)tag[1], (char)tag[2], (char)tag[3], '\0'};
    int rc = CHECKPOINT_OK;
    if (memcmp(tag, "MODL", 4) == 0) {
        char msg[256] = "";
        if (c->model != NULL) {
            cli_set_error(err, err_size, "%s: two MODL sections", path);
            return CHECKPOINT_EFORMAT;
        }
        rc = ebm_model_load_buffer(&c->model, p, (size_t)len, msg, sizeof msg);
        if (rc != EBM_OK) {
            cli_set_error(err, err_size, "%s: the model section: %s", path, msg);
            return rc == EBM_ENOMEM ? CHECKPOINT_ENOMEM : CHECKPOINT_EFORMAT;
        }
        return CHECKPOINT_OK;
    }
    if (memcmp(tag, "RNG ", 4) == 0) {
        if (len != 8 * EBM_RNG_STATE_WORDS) {
            goto bad_length;
        }
        for (int i = 0; i < EBM_RNG_STATE_WORDS; i++) {
            c->rng_state[i] = get_u64(p + 8 * i);
        }
        c->has_rng = 1;
        return CHECKPOINT_OK;
    }
    if (memcmp(tag, "ITER", 4) == 0) {
        if (len != 16) {
            goto bad_length;
        }
        c->iteration = (int64_t)get_u64(p);
        const uint64_t u = get_u64(p + 8);
        memcpy(&c->seconds, &u, sizeof u);
        if (!step_ok(c->iteration) || !(c->seconds >= 0.0 && c->seconds <= DBL_MAX)) {
            cli_set_error(err, err_size, "%s: section ITER: iteration %lld, seconds %g (expected "
                          "0 to 2^62 and a finite time >= 0)", path, (long long)c->iteration,
                          c->seconds);
            return CHECKPOINT_EFORMAT;
        }
        return CHECKPOINT_OK;
    }
    if (memcmp(tag, "OPTM", 4) == 0) {
        if (len < 16) {
            goto bad_length;
        }
        const uint64_t n = get_u64(p + 8);
        if (n > (len - 16) / 4 || len != 16 + 4 * n) {
            goto bad_length;
        }
        c->opt_step = (int64_t)get_u64(p);
        if (!step_ok(c->opt_step)) {
            cli_set_error(err, err_size, "%s: section OPTM: step %lld (expected 0 to 2^62)", path,
                          (long long)c->opt_step);
            return CHECKPOINT_EFORMAT;
        }
        c->opt_floats = (int64_t)n;
        free(c->opt_buffers);
        rc = get_floats(p + 16, n, &c->opt_buffers);
    } else if (memcmp(tag, "AVRG", 4) == 0) {
        if (len < 24) {
            goto bad_length;
        }
        const uint64_t n = get_u64(p + 16);
        const int64_t from = (int64_t)get_u64(p), count = (int64_t)get_u64(p + 8);
        if (n > (len - 24) / 8 || len != 24 + 8 * n) {
            goto bad_length;
        }
        if (!step_ok(from) || !step_ok(count) || n == 0) {
            cli_set_error(err, err_size, "%s: section AVRG: from %lld, count %lld, n %llu "
                          "(expected 0 to 2^62, 0 to 2^62, n >= 1)", path, (long long)from,
                          (long long)count, (unsigned long long)n);
            return CHECKPOINT_EFORMAT;
        }
        free(c->avg_mean);
        c->avg_mean = malloc((size_t)n * sizeof *c->avg_mean);
        if (c->avg_mean == NULL) {
            rc = CHECKPOINT_ENOMEM;
        } else {
            for (uint64_t i = 0; i < n; i++) {
                const uint64_t u = get_u64(p + 24 + 8 * i);
                memcpy(&c->avg_mean[i], &u, sizeof u);
            }
            c->has_average = 1;
            c->avg_from = from;
            c->avg_count = count;
            c->avg_n = (int64_t)n;
        }
    } else if (memcmp(tag, "CHNS", 4) == 0) {
        if (len < 16) {
            goto bad_length;
        }
        const uint64_t rows = get_u64(p), w = get_u64(p + 8);
        if (w == 0 || rows > (len - 16) / 4 / w || len != 16 + 4 * rows * w) {
            goto bad_length;
        }
        c->n_chains = (int64_t)rows;
        c->chain_width = (int64_t)w;
        free(c->chains);
        rc = get_floats(p + 16, rows * w, &c->chains);
    } else if (memcmp(tag, "CONF", 4) == 0) {
        free(c->config);
        c->config = malloc((size_t)len + 1);
        if (c->config == NULL) {
            rc = CHECKPOINT_ENOMEM;
        } else {
            memcpy(c->config, p, (size_t)len);
            c->config[len] = '\0';
        }
    }
    if (rc == CHECKPOINT_ENOMEM) {
        cli_set_error(err, err_size, "%s: out of memory reading section %s", path, name);
    }
    return rc;
bad_length:
    cli_set_error(err, err_size, "%s: section %s has a bad length (%llu bytes)", path, name,
            (unsigned long long)len);
    return CHECKPOINT_EFORMAT;
}

int checkpoint_save_models(const char *out, const ebm_model_t *shown, const ebm_model_t *raw,
                           char *err, size_t err_size)
{
    char path[4200];
    const ebm_model_t *m[2] = {shown, raw};
    const char *name[2] = {"model.ebm", "model_raw.ebm"};
    for (int i = 0; i < 2 && m[i] != NULL; i++) {
        snprintf(path, sizeof path, "%s/%s", out, name[i]);
        if (ebm_model_save(m[i], path) != EBM_OK) {
            snprintf(err, err_size, "%s: %s", path, ebm_model_errmsg(m[i]));
            return CHECKPOINT_EIO;
        }
    }
    return CHECKPOINT_OK;
}

int checkpoint_load(checkpoint *out, const char *path, char *err, size_t err_size)
{
    if (out == NULL || path == NULL) {
        cli_set_error(err, err_size, "checkpoint_load: out and path are required");
        return CHECKPOINT_EARG;
    }
    memset(out, 0, sizeof *out);
    unsigned char *p = NULL;
    size_t n = 0;
    int rc = read_file(path, &p, &n, err, err_size);
    if (rc) {
        return rc;
    }
    if (n < HEADER_BYTES + CRC_BYTES || memcmp(p, magic, sizeof magic) != 0) {
        cli_set_error(err, err_size, "%s: not a libebm checkpoint (bad magic or too short)", path);
        rc = CHECKPOINT_EFORMAT;
    } else if (get_u32(p + 8) < FORMAT_VERSION_MIN || get_u32(p + 8) > FORMAT_VERSION) {
        cli_set_error(err, err_size, "%s: checkpoint format version %u, this program reads %d to %d",
                path, (unsigned)get_u32(p + 8), FORMAT_VERSION_MIN, FORMAT_VERSION);
        rc = CHECKPOINT_EFORMAT;
    } else if (crc_of(p, n - CRC_BYTES) != get_u32(p + n - CRC_BYTES)) {
        cli_set_error(err, err_size, "%s: CRC mismatch: the file is damaged or truncated", path);
        rc = CHECKPOINT_EFORMAT;
    }
    const uint32_t sections = rc ? 0 : get_u32(p + 12);
    size_t at = HEADER_BYTES;
    const size_t end = n - CRC_BYTES;
    for (uint32_t s = 0; rc == CHECKPOINT_OK && s < sections; s++) {
        if (end - at < SECTION_HEAD) {
            cli_set_error(err, err_size, "%s: section %u runs past the end", path, (unsigned)s);
            rc = CHECKPOINT_EFORMAT;
            break;
        }
        const uint64_t len = get_u64(p + at + 4);
        if (len > end - at - SECTION_HEAD) {
            cli_set_error(err, err_size, "%s: section %u is longer than the file", path, (unsigned)s);
            rc = CHECKPOINT_EFORMAT;
            break;
        }
        rc = parse_section(out, path, p + at, p + at + SECTION_HEAD, len, err, err_size);
        at += SECTION_HEAD + (size_t)len;
    }
    if (rc == CHECKPOINT_OK && at != end) {
        cli_set_error(err, err_size, "%s: %zu bytes after the last section", path, end - at);
        rc = CHECKPOINT_EFORMAT;
    }
    if (rc == CHECKPOINT_OK && (out->model == NULL || !out->has_rng)) {
        cli_set_error(err, err_size, "%s: the %s section is missing", path,
                out->model == NULL ? "MODL" : "RNG");
        rc = CHECKPOINT_EFORMAT;
    }
    free(p);
    if (rc) {
        checkpoint_free(out);
    }
    return rc;
}

const char *checkpoint_config_tunable(const checkpoint *c, const char *now)
{
    const char *bar = now != NULL ? strstr(now, " | ") : NULL;
    if (c == NULL || c->config == NULL || bar == NULL) {
        return NULL;
    }
    /* The fixed part and the " | " after it: a text that ends before its
     * bar (one without a bar) differs within them. */
    const size_t fixed = (size_t)(bar - now) + 3;
    return strncmp(c->config, now, fixed) == 0 ? c->config + fixed : NULL;
}

/* ------------------------------------------------------------------------ */
/* Restore                                                                  */
/* ------------------------------------------------------------------------ */

/* Whether c's average (or its absence) fits avg: see checkpoint_restore. */
static int average_fits(const checkpoint *c, const optim_average *avg, int64_t n_params,
                        char *err, size_t err_size)
{
    const int on = optim_average_on(avg);
    if (c->has_average && !on) {
        cli_set_error(err, err_size, "the checkpoint holds the average of the iterates after "
                "step %lld, which this run does not keep (--average-from %lld continues it)",
                (long long)c->avg_from, (long long)c->avg_from);
        return 0;
    }
    if (c->has_average && c->avg_from != avg->from) {
        cli_set_error(err, err_size, "the checkpoint averages the iterates after step %lld, this "
                "run those after step %lld", (long long)c->avg_from, (long long)avg->from);
        return 0;
    }
    if (c->has_average && (c->avg_n != n_params || avg->n != n_params)) {
        cli_set_error(err, err_size, "the checkpoint's average has %lld parameters, the model "
                "%lld", (long long)c->avg_n, (long long)n_params);
        return 0;
    }
    if (!c->has_average && on && c->opt_step > avg->from) {
        cli_set_error(err, err_size, "the checkpoint is at optimiser step %lld and holds no "
                "average of the iterates: the average of those after step %lld would miss some "
                "(--average-from %lld or more starts one)", (long long)c->opt_step,
                (long long)avg->from, (long long)c->opt_step);
        return 0;
    }
    return 1;
}

int checkpoint_restore(const checkpoint *c, ebm_model_t *m, ebm_rng_t *rng, optim *o,
                       optim_average *avg, ebm_estimator_t *e, char *err, size_t err_size)
{
    if (c == NULL || c->model == NULL || m == NULL || rng == NULL || o == NULL) {
        cli_set_error(err, err_size, "checkpoint_restore: checkpoint, model, generator and optimiser "
                "are required");
        return CHECKPOINT_EARG;
    }
    const int64_t layers = ebm_model_num_layers(m);
    int same = layers == ebm_model_num_layers(c->model);
    for (int64_t l = 0; same && l < layers; l++) {
        same = ebm_model_layer_size(m, l) == ebm_model_layer_size(c->model, l) &&
               ebm_model_layer_units(m, l) == ebm_model_layer_units(c->model, l);
    }
    if (!same) {
        cli_set_error(err, err_size, "the checkpoint's model has other layer sizes or unit kinds");
        return CHECKPOINT_EMISMATCH;
    }
    if (c->opt_floats != optim_buffer_floats(o)) {
        cli_set_error(err, err_size, "the checkpoint's optimiser has %lld buffer floats, this one %lld "
                "(another optimiser or momentum setting?)", (long long)c->opt_floats,
                (long long)optim_buffer_floats(o));
        return CHECKPOINT_EMISMATCH;
    }
    if (c->n_chains > 0 && (e == NULL || c->chain_width != ebm_model_state_width(m))) {
        cli_set_error(err, err_size, "the checkpoint has %lld persistent chains but %s",
                (long long)c->n_chains,
                e == NULL ? "there is no estimator to take them" : "their width differs");
        return CHECKPOINT_EMISMATCH;
    }
    const int64_t n_params = ebm_model_param_count(m);
    if (!average_fits(c, avg, n_params, err, err_size)) {
        return CHECKPOINT_EMISMATCH;
    }
    float *theta = malloc((size_t)n_params * sizeof *theta);
    float *mu = malloc((size_t)ebm_model_state_width(m) * sizeof *mu);
    if (theta == NULL || mu == NULL) {
        free(theta);
        free(mu);
        cli_set_error(err, err_size, "checkpoint_restore: out of memory");
        return CHECKPOINT_ENOMEM;
    }
    ebm_model_get_offsets(c->model, mu);
    uint64_t old_state[EBM_RNG_STATE_WORDS];
    ebm_rng_get_state(rng, old_state);
    ebm_model_get_params(c->model, theta);
    int rc = ebm_rng_set_state(rng, c->rng_state);
    if (rc != EBM_OK) {
        cli_set_error(err, err_size, "the checkpoint's generator state is invalid: %s",
                ebm_rng_errmsg(rng));
        free(theta);
        free(mu);
        return CHECKPOINT_EMISMATCH;
    }
    if (c->n_chains > 0 &&
        (rc = ebm_estimator_set_chains(e, c->n_chains, c->chains, c->chain_width)) != EBM_OK) {
        cli_set_error(err, err_size, "the checkpoint's chains: %s", ebm_estimator_errmsg(e));
        ebm_rng_set_state(rng, old_state);
        free(theta);
        free(mu);
        return CHECKPOINT_EMISMATCH;
    }
    /* Parameters and offsets (a centred model's) last: they can only fail
     * on values the loader checked (keep_law 0 allocates nothing). */
    rc = ebm_model_set_params(m, theta);
    if (rc == EBM_OK) {
        rc = ebm_model_set_offsets(m, mu, 0);
    }
    free(theta);
    free(mu);
    if (rc != EBM_OK) {
        cli_set_error(err, err_size, "the checkpoint's parameters: %s", ebm_model_errmsg(m));
        ebm_rng_set_state(rng, old_state);
        return CHECKPOINT_EMISMATCH;
    }
    /* These take only values checked above and by the loader (the buffer
     * length, the step and the average's counts in range); a refusal would
     * be a bug between the two, reported rather than ignored. */
    if (optim_state_set(o, c->opt_step, c->opt_buffers, c->opt_floats) != OPTIM_OK ||
        (optim_average_on(avg) &&
         optim_average_state_set(avg, avg->from, c->has_average ? c->avg_count : 0,
                                 c->has_average ? c->avg_mean : NULL, n_params) != OPTIM_OK)) {
        cli_set_error(err, err_size, "the checkpoint's optimiser state (step %lld) or average "
                      "(%lld iterates) was refused after the model was restored",
                      (long long)c->opt_step, (long long)c->avg_count);
        return CHECKPOINT_EMISMATCH;
    }
    return CHECKPOINT_OK;
}
