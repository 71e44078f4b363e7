/* The model file format (docs/format.md; include/ebm.h, ebm_model_save and
 * ebm_model_load; tests/README.md, classes 4 and 5): golden bytes, round
 * trips through memory and files, atomic saves, every truncation and every
 * bit flip, each malformation with its own message, loads that must not
 * allocate for the declared shape, a mutation loop; bad input of save, load
 * and the buffers (codes, messages naming the argument, nothing changed). */
#include "tests.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

/* Offsets of the v1 fields. */
#define OFF_VERSION 8
#define OFF_LAYERS 12
#define OFF_VISIBLE 16
#define OFF_HIDDEN 20
#define OFF_SIZES 24
static size_t off_count(size_t n_layers) { return OFF_SIZES + 8 * n_layers; }
static size_t off_params(size_t n_layers) { return off_count(n_layers) + 8; }

/* The serialised model in a new buffer of *n bytes. */
static unsigned char *image_of(const ebm_model_t *m, size_t *n)
{
    int64_t want = ebm_model_save_size(m);
    ck_assert_int_gt(want, 0);
    unsigned char *p = malloc((size_t)want);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(ebm_model_save_buffer(m, p, (size_t)want, n), EBM_OK);
    ck_assert_uint_eq(*n, (size_t)want);
    return p;
}

static float *params_of(const ebm_model_t *m)
{
    float *p = malloc((size_t)ebm_model_param_count(m) * sizeof *p);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    return p;
}

/* The same shape, unit kinds and parameter bits. */
static void assert_same_model(const ebm_model_t *a, const ebm_model_t *b)
{
    ck_assert_int_eq(ebm_model_num_layers(a), ebm_model_num_layers(b));
    for (int64_t l = 0; l < ebm_model_num_layers(a); l++) {
        ck_assert_int_eq(ebm_model_layer_size(a, l), ebm_model_layer_size(b, l));
        ck_assert_int_eq(ebm_model_layer_units(a, l), ebm_model_layer_units(b, l));
    }
    ck_assert_int_eq(ebm_model_param_count(a), ebm_model_param_count(b));
    float *pa = params_of(a), *pb = params_of(b);
    ck_assert(memcmp(pa, pb, (size_t)ebm_model_param_count(a) * sizeof *pa) == 0);
    free(pa);
    free(pb);
    const int64_t w = ebm_model_state_width(a);
    float *oa = t_floats(w), *ob = t_floats(w);
    ck_assert_int_eq(ebm_model_get_offsets(a, oa), EBM_OK);
    ck_assert_int_eq(ebm_model_get_offsets(b, ob), EBM_OK);
    ck_assert(memcmp(oa, ob, (size_t)w * sizeof *oa) == 0);
    free(oa);
    free(ob);
}

/* Load p[0..n) and require EBM_EFORMAT, no model, and a message containing
 * each of the given substrings (NULL-terminated list; may be empty). */
static void expect_format_error_v(const unsigned char *p, size_t n, const char *const *subs)
{
    ebm_model_t *m = (ebm_model_t *)&m; /* a sentinel that must become NULL */
    char err[512] = "";
    int rc = ebm_model_load_buffer(&m, p, n, err, sizeof err);
    ck_assert_msg(rc == EBM_EFORMAT, "%zu bytes: rc %s (%s)", n, ebm_error_name(rc), err);
    ck_assert_ptr_null(m);
    ck_assert_msg(err[0] != '\0', "%zu bytes: empty message", n);
    for (; *subs != NULL; subs++) {
        ck_assert_msg(strstr(err, *subs) != NULL, "message \"%s\" lacks \"%s\"", err, *subs);
    }
}
#define expect_format_error(p, n, ...)                                                   \
    do {                                                                                 \
        const char *const subs_[] = {__VA_ARGS__, NULL};                                 \
        expect_format_error_v((p), (n), subs_);                                          \
    } while (0)

/* The four models every round trip uses, with random parameters; the
 * last is centred (a version-2 file). */
enum { N_KINDS = 4 };
static ebm_model_t *sample_model(int kind)
{
    static const int64_t rbm[] = {6, 4}, dbm[] = {5, 4, 3, 2}, grbm[] = {7, 3}, cdbm[] = {4, 3, 2};
    ebm_model_t *m;
    switch (kind) {
    case 0: m = t_model(2, rbm, EBM_UNITS_BINARY, EBM_UNITS_BINARY); break;
    case 1: m = t_model(4, dbm, EBM_UNITS_SPIN, EBM_UNITS_SPIN); break;
    case 2: m = t_model(2, grbm, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY); break;
    default: m = t_model(3, cdbm, EBM_UNITS_BINARY, EBM_UNITS_BINARY); break;
    }
    t_random_params(m, 1000 + (uint64_t)kind, 1.5);
    if (kind == 3) {
        float mu[9];
        for (int j = 0; j < 9; j++) {
            mu[j] = (float)j / 8.0f;
        }
        ck_assert_int_eq(ebm_model_set_offsets(m, mu, 1), EBM_OK);
    }
    return m;
}

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    size_t cap = 1 << 12, len = 0;
    unsigned char *p = malloc(cap);
    ck_assert_ptr_nonnull(p);
    size_t k;
    while ((k = fread(p + len, 1, cap - len, f)) > 0) {
        len += k;
        if (len == cap) {
            p = realloc(p, cap *= 2);
            ck_assert_ptr_nonnull(p);
        }
    }
    fclose(f);
    *n = len;
    return p;
}

static void write_text(const char *path, const char *text)
{
    t_write_file(path, text, strlen(text));
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
/*
 * Cap this process's address space at its current size plus 256 MiB, so
 * that a loader that allocated for a declared shape (gigabytes) would fail
 * with EBM_ENOMEM instead of quietly succeeding under overcommit. Returns 1
 * if the cap is in force (restore with uncap_address_space).
 */
static int cap_address_space(struct rlimit *old)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f == NULL) {
        return 0;
    }
    int ok = fscanf(f, "%lu", &pages) == 1;
    fclose(f);
    if (!ok || getrlimit(RLIMIT_AS, old) != 0) {
        return 0;
    }
    rlim_t want = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)256 << 20);
    if (old->rlim_cur != RLIM_INFINITY && old->rlim_cur <= want) {
        return 0;
    }
    struct rlimit r = *old;
    r.rlim_cur = want;
    return setrlimit(RLIMIT_AS, &r) == 0;
}

static void uncap_address_space(const struct rlimit *old) { setrlimit(RLIMIT_AS, old); }
#endif

/* ---- known answers ------------------------------------------------------ */

START_TEST(test_crc32_known_answer)
{
    ck_assert_uint_eq(t_crc32((const unsigned char *)"123456789", 9), 0xcbf43926u);
    ck_assert_uint_eq(t_crc32((const unsigned char *)"", 0), 0u);
    /* The library's CRC agrees with this one on every image it writes. */
    for (int kind = 0; kind < N_KINDS; kind++) {
        ebm_model_t *m = sample_model(kind);
        size_t n;
        unsigned char *p = image_of(m, &n);
        ck_assert_uint_eq(get_le(p + n - 4, 4), t_crc32(p, n - 4));
        free(p);
        ebm_model_destroy(m);
    }
}
END_TEST

/* A binary-visible, spin-hidden 2 x 1 RBM, byte for byte (the CRC from zlib). */
static const unsigned char golden[72] = {
    0x89, 0x45, 0x42, 0x4d, 0x0d, 0x0a, 0x1a, 0x0a, 0x01, 0x00, 0x00, 0x00, /* magic, v1 */
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, /* L+1, units */
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, /* sizes 2, 1 */
    0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 5 params */
    0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x80, 0xbf, 0x00, 0x00, 0x80, 0x3e, /* .5 -1 .25 */
    0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0xbe, 0x05, 0xf1, 0xf3, 0x60, /* 2 -.125 CRC */
};

START_TEST(test_golden_bytes)
{
    static const int64_t sizes[] = {2, 1};
    static const float params[] = {0.5f, -1.0f, 0.25f, 2.0f, -0.125f}; /* W_1 | b_0 | b_1 */
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_SPIN);
    ck_assert_int_eq(ebm_model_set_params(m, params), EBM_OK);
    ck_assert_int_eq(ebm_model_save_size(m), (int64_t)sizeof golden);
    size_t n;
    unsigned char *p = image_of(m, &n);
    ck_assert(memcmp(p, golden, sizeof golden) == 0);

    ebm_model_t *back = NULL;
    char err[256] = "";
    ck_assert_int_eq(ebm_model_load_buffer(&back, golden, sizeof golden, err, sizeof err), EBM_OK);
    ck_assert_str_eq(err, ""); /* success leaves the buffer alone */
    assert_same_model(m, back);
    ck_assert_int_eq(ebm_model_layer_units(back, 0), EBM_UNITS_BINARY);
    ck_assert_int_eq(ebm_model_layer_units(back, 1), EBM_UNITS_SPIN);
    free(p);
    ebm_model_destroy(back);
    ebm_model_destroy(m);
}
END_TEST

/* The same RBM centred, offsets (0.5, 0.25 | 0.75): version 2, categories
 * 1 and flags 1 after the unit kinds, the offsets after the parameters
 * (bytes from Python's struct and zlib.crc32). */
static const unsigned char golden_v2[92] = {
    0x89, 0x45, 0x42, 0x4d, 0x0d, 0x0a, 0x1a, 0x0a, 0x02, 0x00, 0x00, 0x00, /* magic, v2 */
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, /* L+1, units */
    0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, /* q 1, flags 1, */
    0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* sizes 2, 1 */
    0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3f, /* 5 params: .5 */
    0x00, 0x00, 0x80, 0xbf, 0x00, 0x00, 0x80, 0x3e, 0x00, 0x00, 0x00, 0x40, /* -1 .25 2 */
    0x00, 0x00, 0x00, 0xbe, 0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x80, 0x3e, /* -.125 | .5 .25 */
    0x00, 0x00, 0x40, 0x3f, 0xe9, 0x80, 0x3d, 0xaf,                         /* .75 CRC */
};

/* Version 2: the golden bytes both ways, and a model whose offsets go back
 * to 0 is written as version 1 again (the same bytes as never centred). */
START_TEST(test_golden_bytes_v2)
{
    static const int64_t sizes[] = {2, 1};
    static const float params[] = {0.5f, -1.0f, 0.25f, 2.0f, -0.125f};
    static const float mu[] = {0.5f, 0.25f, 0.75f}, zero[3] = {0};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_SPIN);
    ck_assert_int_eq(ebm_model_set_params(m, params), EBM_OK);
    ck_assert_int_eq(ebm_model_set_offsets(m, mu, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_save_size(m), (int64_t)sizeof golden_v2);
    size_t n;
    unsigned char *p = image_of(m, &n);
    ck_assert(memcmp(p, golden_v2, sizeof golden_v2) == 0);
    free(p);
    ebm_model_t *back = NULL;
    ck_assert_int_eq(ebm_model_load_buffer(&back, golden_v2, sizeof golden_v2, NULL, 0), EBM_OK);
    assert_same_model(m, back);
    ebm_model_destroy(back);

    ck_assert_int_eq(ebm_model_set_offsets(m, zero, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_save_size(m), (int64_t)sizeof golden);
    p = image_of(m, &n);
    ck_assert(memcmp(p, golden, sizeof golden) == 0);
    free(p);
    ebm_model_destroy(m);
}
END_TEST

/* ---- round trips -------------------------------------------------------- */

START_TEST(test_buffer_round_trip)
{
    for (int kind = 0; kind < N_KINDS; kind++) {
        ebm_model_t *m = sample_model(kind);
        size_t n1, n2;
        unsigned char *p1 = image_of(m, &n1);
        ebm_model_t *back = NULL;
        char err[256];
        ck_assert_int_eq(ebm_model_load_buffer(&back, p1, n1, err, sizeof err), EBM_OK);
        assert_same_model(m, back);
        unsigned char *p2 = image_of(back, &n2);
        ck_assert_uint_eq(n1, n2);
        ck_assert(memcmp(p1, p2, n1) == 0);
        /* A loaded model computes what the original does (derived caches refreshed). */
        int64_t width = ebm_model_state_width(m);
        float *x = calloc((size_t)width, sizeof *x);
        ck_assert_ptr_nonnull(x);
        for (int64_t l = 0; l < ebm_model_num_layers(m); l++) {
            float one = ebm_model_layer_units(m, l) == EBM_UNITS_GAUSSIAN ? 0.75f : 1.0f;
            for (int64_t j = 0; j < ebm_model_layer_size(m, l); j += 2) {
                x[ebm_model_layer_offset(m, l) + j] = one;
            }
            if (ebm_model_layer_units(m, l) == EBM_UNITS_SPIN) {
                for (int64_t j = 1; j < ebm_model_layer_size(m, l); j += 2) {
                    x[ebm_model_layer_offset(m, l) + j] = -1.0f;
                }
            }
        }
        double e1, e2;
        ck_assert_int_eq(ebm_model_energy(m, 1, x, width, &e1), EBM_OK);
        ck_assert_int_eq(ebm_model_energy(back, 1, x, width, &e2), EBM_OK);
        ck_assert(e1 == e2);
        free(x);
        free(p1);
        free(p2);
        ebm_model_destroy(back);
        ebm_model_destroy(m);
    }
}
END_TEST

START_TEST(test_file_round_trip)
{
    char *dir = t_temp_dir("ebm_io_");
    char *path = t_path(dir, "model.ebm");
    for (int kind = 0; kind < N_KINDS; kind++) {
        ebm_model_t *m = sample_model(kind);
        ck_assert_int_eq(ebm_model_save(m, path), EBM_OK);
        size_t n, nf;
        unsigned char *p = image_of(m, &n);
        unsigned char *f = read_all(path, &nf);
        ck_assert_uint_eq(n, nf);
        ck_assert(memcmp(p, f, n) == 0);
        struct stat st;
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 0777, 0644);
        ebm_model_t *back = NULL;
        char err[256];
        ck_assert_msg(ebm_model_load(&back, path, err, sizeof err) == EBM_OK, "%s", err);
        assert_same_model(m, back);
        ck_assert_int_eq(t_count_entries(dir), 1); /* no temporary file left */
        free(p);
        free(f);
        ebm_model_destroy(back);
        ebm_model_destroy(m);
    }
    free(path);
    t_rm_tree(dir);
    free(dir);
}
END_TEST

START_TEST(test_save_replaces_existing_file)
{
    char *dir = t_temp_dir("ebm_io_");
    char *path = t_path(dir, "model.ebm");
    write_text(path, "an older file that is longer than nothing at all");
    ck_assert_int_eq(chmod(path, 0600), 0);
    ebm_model_t *m = sample_model(2);
    ck_assert_int_eq(ebm_model_save(m, path), EBM_OK);
    ebm_model_t *back = NULL;
    char err[256];
    ck_assert_msg(ebm_model_load(&back, path, err, sizeof err) == EBM_OK, "%s", err);
    assert_same_model(m, back);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0644);
    ck_assert_int_eq(t_count_entries(dir), 1);
    /* Saving again over a model file works too. */
    t_random_params(m, 77, 0.5);
    ck_assert_int_eq(ebm_model_save(m, path), EBM_OK);
    ebm_model_destroy(back);
    ck_assert_int_eq(ebm_model_load(&back, path, err, sizeof err), EBM_OK);
    assert_same_model(m, back);
    ebm_model_destroy(back);
    ebm_model_destroy(m);
    free(path);
    t_rm_tree(dir);
    free(dir);
}
END_TEST

START_TEST(test_save_failures_leave_no_trace)
{
    char *dir = t_temp_dir("ebm_io_");
    ebm_model_t *m = sample_model(2);

    /* A directory that does not exist: EBM_EIO naming the path. */
    char *missing = t_path(dir, "no/such/dir/model.ebm");
    ck_assert_int_eq(ebm_model_save(m, missing), EBM_EIO);
    ck_assert_ptr_nonnull(strstr(ebm_model_errmsg(m), missing));
    ck_assert_ptr_nonnull(strstr(ebm_model_errmsg(m), strerror(ENOENT)));
    ck_assert_int_eq(t_count_entries(dir), 0);

    /* path names a directory: the temporary file is written, the rename
     * fails, the temporary file is removed and the directory untouched. */
    char *sub = t_path(dir, "sub");
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    char *inside = t_path(sub, "keep");
    write_text(inside, "kept");
    ck_assert_int_eq(ebm_model_save(m, sub), EBM_EIO);
    ck_assert_ptr_nonnull(strstr(ebm_model_errmsg(m), sub));
    ck_assert_int_eq(t_count_entries(dir), 1);
    ck_assert_int_eq(t_count_entries(sub), 1);

    /* A write that fails half-way (file size limit) leaves the previous
     * file at path exactly as it was. Works as root, unlike permissions. */
    char *path = t_path(dir, "model.ebm");
    write_text(path, "previous contents");
    struct rlimit old;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    struct rlimit small = old;
    small.rlim_cur = 100; /* the GRBM image is 204 bytes */
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    int rc = ebm_model_save(m, path);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, old_handler);
    ck_assert_int_eq(rc, EBM_EIO);
    ck_assert_ptr_nonnull(strstr(ebm_model_errmsg(m), path));
    ck_assert_ptr_nonnull(strstr(ebm_model_errmsg(m), strerror(EFBIG)));
    size_t n;
    unsigned char *f = read_all(path, &n);
    ck_assert_uint_eq(n, strlen("previous contents"));
    ck_assert(memcmp(f, "previous contents", n) == 0);
    ck_assert_int_eq(t_count_entries(dir), 2); /* sub and model.ebm */

    free(f);
    free(path);
    free(inside);
    free(sub);
    free(missing);
    ebm_model_destroy(m);
    t_rm_tree(dir);
    free(dir);
}
END_TEST

START_TEST(test_load_file_errors)
{
    char *dir = t_temp_dir("ebm_io_");
    ebm_model_t *m = (ebm_model_t *)&m;
    char err[512];

    char *missing = t_path(dir, "absent.ebm");
    ck_assert_int_eq(ebm_model_load(&m, missing, err, sizeof err), EBM_EIO);
    ck_assert_ptr_null(m);
    ck_assert_ptr_nonnull(strstr(err, missing));
    ck_assert_ptr_nonnull(strstr(err, strerror(ENOENT)));

    m = (ebm_model_t *)&m;
    ck_assert_int_eq(ebm_model_load(&m, dir, err, sizeof err), EBM_EIO);
    ck_assert_ptr_null(m);
    ck_assert_ptr_nonnull(strstr(err, dir));

    /* A readable file that is not a model: a format error, not EIO. */
    char *empty = t_path(dir, "empty.ebm");
    write_text(empty, "");
    ck_assert_int_eq(ebm_model_load(&m, empty, err, sizeof err), EBM_EFORMAT);
    ck_assert_str_eq(err, "file is 0 bytes; a model file has at least 24");

    /* A tiny errbuf is truncated and NUL-terminated; NULL is allowed. */
    char tiny[5];
    ck_assert_int_eq(ebm_model_load(&m, empty, tiny, sizeof tiny), EBM_EFORMAT);
    ck_assert_str_eq(tiny, "file");
    ck_assert_int_eq(ebm_model_load(&m, empty, NULL, 0), EBM_EFORMAT);

    free(empty);
    free(missing);
    t_rm_tree(dir);
    free(dir);
}
END_TEST

START_TEST(test_null_and_capacity)
{
    ebm_model_t *m = sample_model(0);
    ebm_model_t *out = (ebm_model_t *)&out;
    size_t n;
    unsigned char *p = image_of(m, &n);
    char err[256];

    ck_assert_int_eq(ebm_model_save_size(NULL), -1);
    ck_assert_int_eq(ebm_model_save_buffer(NULL, p, n, &n), EBM_ENULL);
    ck_assert_int_eq(ebm_model_save_buffer(m, NULL, n, &n), EBM_ENULL);
    ck_assert_str_eq(ebm_model_errmsg(m), "buf is NULL");
    ck_assert_int_eq(ebm_model_save_buffer(m, p, n, NULL), EBM_ENULL);
    ck_assert_int_eq(ebm_model_save(NULL, "x"), EBM_ENULL);
    ck_assert_int_eq(ebm_model_save(m, NULL), EBM_ENULL);
    ck_assert_str_eq(ebm_model_errmsg(m), "path is NULL");

    ck_assert_int_eq(ebm_model_load_buffer(NULL, p, n, err, sizeof err), EBM_ENULL);
    ck_assert_str_eq(err, "out is NULL");
    ck_assert_int_eq(ebm_model_load_buffer(&out, NULL, n, err, sizeof err), EBM_ENULL);
    ck_assert_ptr_null(out);
    ck_assert_str_eq(err, "buf is NULL");
    ck_assert_int_eq(ebm_model_load(NULL, "x", err, sizeof err), EBM_ENULL);
    out = (ebm_model_t *)&out;
    ck_assert_int_eq(ebm_model_load(&out, NULL, err, sizeof err), EBM_ENULL);
    ck_assert_ptr_null(out);
    ck_assert_str_eq(err, "path is NULL");

    /* One byte short: EBM_ESHAPE, nothing written, *size unchanged. */
    unsigned char *q = malloc(n);
    ck_assert_ptr_nonnull(q);
    memset(q, 0xa5, n);
    uint64_t before = t_checksum(q, n);
    size_t got = 12345;
    ck_assert_int_eq(ebm_model_save_buffer(m, q, n - 1, &got), EBM_ESHAPE);
    ck_assert_uint_eq(got, 12345);
    ck_assert_uint_eq(t_checksum(q, n), before);
    ck_assert_ptr_nonnull(strstr(ebm_model_errmsg(m), "cap is"));
    /* A larger buffer is fine and only the image is written. */
    unsigned char *big = malloc(n + 10);
    ck_assert_ptr_nonnull(big);
    memset(big, 0x5a, n + 10);
    ck_assert_int_eq(ebm_model_save_buffer(m, big, n + 10, &got), EBM_OK);
    ck_assert_uint_eq(got, n);
    ck_assert(memcmp(big, p, n) == 0);
    ck_assert_uint_eq(big[n], 0x5a);

    free(big);
    free(q);
    free(p);
    ebm_model_destroy(m);
}
END_TEST

/* ---- damage ------------------------------------------------------------- */

START_TEST(test_every_truncation)
{
    for (int kind = 0; kind < N_KINDS; kind++) {
        ebm_model_t *m = sample_model(kind);
        size_t n;
        unsigned char *p = image_of(m, &n);
        for (size_t len = 0; len < n; len++) {
            /* A copy of exactly len bytes, so that ASan sees any over-read. */
            unsigned char *q = malloc(len > 0 ? len : 1);
            ck_assert_ptr_nonnull(q);
            memcpy(q, p, len);
            const size_t ext = get_le(p + OFF_VERSION, 4) == 2 ? 8 : 0; /* version 2 */
            if (len < 24) {
                expect_format_error(q, len, "a model file has at least 24");
            } else if (len >= off_params((size_t)ebm_model_num_layers(m)) + ext) {
                expect_format_error(q, len, "the header declares");
            } else {
                expect_format_error(q, len, "the sizes and param_count end at byte");
            }
            free(q);
        }
        free(p);
        ebm_model_destroy(m);
    }
}
END_TEST

START_TEST(test_every_bit_flip)
{
    /* CRC-32 detects every single-bit error, and the fields before it are
     * checked exactly, so no flipped file may load (a GRBM, version 1, and
     * a centred DBM, version 2). */
    for (int kind = 2; kind <= 3; kind++) {
        ebm_model_t *m = sample_model(kind);
        size_t n;
        unsigned char *p = image_of(m, &n);
        ck_assert_uint_eq(get_le(p + OFF_VERSION, 4), (uint64_t)kind - 1);
        for (size_t bit = 0; bit < 8 * n; bit++) {
            p[bit / 8] ^= (unsigned char)(1u << (bit % 8));
            expect_format_error(p, n, "");
            p[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        }
        ebm_model_t *back = NULL;
        ck_assert_int_eq(ebm_model_load_buffer(&back, p, n, NULL, 0), EBM_OK);
        ebm_model_destroy(back);
        free(p);
        ebm_model_destroy(m);
    }
}
END_TEST

/* A fresh copy of the image of a sample model, with room for 16 more bytes. */
static unsigned char *copy_image(const unsigned char *p, size_t n)
{
    unsigned char *q = malloc(n + 16);
    ck_assert_ptr_nonnull(q);
    memcpy(q, p, n);
    return q;
}

START_TEST(test_each_malformation)
{
    ebm_model_t *rbm = sample_model(0), *grbm = sample_model(2);
    size_t n, ng;
    unsigned char *base = image_of(rbm, &n);
    unsigned char *gbase = image_of(grbm, &ng);
    unsigned char *q;
    const size_t cnt = off_count(2), par = off_params(2);

    q = copy_image(base, n);
    expect_format_error(q, 13, "file is 13 bytes; a model file has at least 24");

    q[0] = 'P';
    expect_format_error(q, n, "bad magic 50 45 42 4d 0d 0a 1a 0a", "not a libebm model file");
    /* CR LF -> LF, as a text-mode transfer does: the file shifts by one. */
    memcpy(q, base, n);
    memmove(q + 4, q + 5, n - 5);
    expect_format_error(q, n - 1, "bad magic", "text-mode");
    free(q);

    q = copy_image(base, n);
    put_le(q + OFF_VERSION, 3, 4);
    t_fix_crc(q, n);
    expect_format_error(q, n, "format version 3 is not supported", "versions 1 to 2");
    put_le(q + OFF_VERSION, 0, 4);
    t_fix_crc(q, n);
    expect_format_error(q, n, "format version 0 is not supported");

    memcpy(q, base, n);
    put_le(q + OFF_LAYERS, 1, 4);
    expect_format_error(q, n, "n_layers is 1; it must be from 2 to 32");
    put_le(q + OFF_LAYERS, 33, 4);
    expect_format_error(q, n, "n_layers is 33; it must be from 2 to 32");
    put_le(q + OFF_LAYERS, 0xffffffffu, 4);
    expect_format_error(q, n, "n_layers is 4294967295");

    memcpy(q, base, n);
    put_le(q + OFF_VISIBLE, 7, 4);
    t_fix_crc(q, n);
    expect_format_error(q, n, "invalid units: ", "visible_units is 7");
    memcpy(q, base, n);
    put_le(q + OFF_HIDDEN, EBM_UNITS_GAUSSIAN, 4);
    t_fix_crc(q, n);
    expect_format_error(q, n, "invalid units: ", "hidden_units is 2");
    memcpy(q, base, n);
    put_le(q + OFF_HIDDEN, 0x80000000u, 4);
    expect_format_error(q, n, "invalid units: ", "2147483648 (hidden)");

    /* The sizes of a 3-layer file must be there before they are read. */
    memcpy(q, base, n);
    put_le(q + OFF_LAYERS, 3, 4);
    expect_format_error(q, 50, "file is 50 bytes; with 3 layers the sizes and param_count end at "
                               "byte 56");

    memcpy(q, base, n);
    put_le(q + OFF_SIZES + 8, 0, 8);
    t_fix_crc(q, n);
    expect_format_error(q, n, "sizes[1] is 0; it must be from 1 to 2147483647");
    put_le(q + OFF_SIZES, 0x80000000u, 8);
    expect_format_error(q, n, "sizes[0] is 2147483648; it must be from 1 to 2147483647");

    /* (2^31-1) x (2^31-1): every factor is in range, the shape is not. */
    memcpy(q, base, n);
    put_le(q + OFF_SIZES, 2147483647u, 8);
    put_le(q + OFF_SIZES + 8, 2147483647u, 8);
    put_le(q + cnt, 2147483647ull * 2147483647ull + 2 * 2147483647ull, 8);
    t_fix_crc(q, n);
    expect_format_error(q, n, "invalid shape: ", "2147483647");

    memcpy(q, base, n);
    put_le(q + cnt, 999, 8);
    t_fix_crc(q, n);
    expect_format_error(q, n, "param_count is 999; the shape has 34 parameters");

    memcpy(q, base, n);
    memcpy(q + n, "\1\2\3", 3);
    expect_format_error(q, n + 3, "3 trailing bytes after the CRC");
    t_fix_crc(q, n + 3);
    expect_format_error(q, n + 3, "3 trailing bytes after the CRC");

    memcpy(q, base, n);
    expect_format_error(q, n - 1, "file is 187 bytes; the header declares 188");

    memcpy(q, base, n);
    q[par + 5] ^= 0x10;
    expect_format_error(q, n, "CRC-32 mismatch: the file stores 0x");

    memcpy(q, base, n);
    put_le(q + par, 0x7fc00000u, 4); /* W_1[0,0] = NaN */
    t_fix_crc(q, n);
    expect_format_error(q, n, "invalid parameter: W_1[0,0]", "nan");
    memcpy(q, base, n);
    put_le(q + par + 4 * (24 + 6), 0xff800000u, 4); /* -inf in b_1[0], after W_1 and b_0 */
    t_fix_crc(q, n);
    expect_format_error(q, n, "invalid parameter: b_1[0]", "inf");
    free(q);

    /* GRBM: logvar_0 follows W_1 (7 x 3) and b_0, b_1 (7 + 3). */
    q = copy_image(gbase, ng);
    put_le(q + off_params(2) + 4 * (21 + 10 + 2), 0x42c80000u, 4); /* 100.0f */
    t_fix_crc(q, ng);
    expect_format_error(q, ng, "invalid parameter: logvar_0[2]", "100", "log-variance");
    memcpy(q, gbase, ng);
    put_le(q + off_params(2) + 4 * (21 + 10 + 6), 0xc1f00000u, 4); /* -30.0f: allowed */
    t_fix_crc(q, ng);
    ebm_model_t *ok = NULL;
    ck_assert_int_eq(ebm_model_load_buffer(&ok, q, ng, NULL, 0), EBM_OK);
    ebm_model_destroy(ok);
    free(q);

    free(base);
    free(gbase);
    ebm_model_destroy(rbm);
    ebm_model_destroy(grbm);
}
END_TEST

/* The checks of version 2's offsets, each with its message. */
START_TEST(test_version_2_malformations)
{
    ebm_model_t *rbm = sample_model(0), *grbm = sample_model(2), *cdbm = sample_model(3);
    size_t n, ng, nc;
    unsigned char *base = image_of(rbm, &n), *gbase = image_of(grbm, &ng);
    unsigned char *cbase = image_of(cdbm, &nc);
    const size_t offs = nc - 4 - 4 * 9; /* the 9 offsets of the 4-3-2 DBM */

    /* Out of range, not finite, every one 0. */
    unsigned char *q = copy_image(cbase, nc);
    put_le(q + offs + 4 * 2, 0x3fc00000u, 4); /* 1.5f */
    t_fix_crc(q, nc);
    expect_format_error(q, nc, "invalid offset: offsets[2] (layer 0, unit 2) is 1.5",
                        "offsets of binary units must be in [0, 1]");
    memcpy(q, cbase, nc);
    put_le(q + offs + 4 * 8, 0x7fc00000u, 4); /* NaN, layer 2 unit 1 */
    t_fix_crc(q, nc);
    expect_format_error(q, nc, "offsets[8] (layer 2, unit 1) is nan");
    memcpy(q, cbase, nc);
    ck_assert_uint_eq(get_le(q + offs, 4), 0); /* offsets[0] is 0 */
    put_le(q + offs, 0x80000000u, 4);
    t_fix_crc(q, nc);
    expect_format_error(q, nc, "invalid offset: offsets[0] is -0; a model stores +0");
    memcpy(q, cbase, nc);
    memset(q + offs, 0, 4 * 9);
    t_fix_crc(q, nc);
    expect_format_error(q, nc, "flags say the offsets follow, but every offset is 0",
                        "flag bit 0 clear");
    /* The fields after the unit kinds: categories, flags. */
    memcpy(q, cbase, nc);
    put_le(q + 24, 3, 4);
    t_fix_crc(q, nc);
    expect_format_error(q, nc, "categories is 3; visible units that are not Potts units have 1");
    memcpy(q, cbase, nc);
    put_le(q + 28, 3, 4);
    t_fix_crc(q, nc);
    expect_format_error(q, nc, "flags is 0x3; only bit 0 (the offsets follow) is defined");
    memcpy(q, cbase, nc);
    put_le(q + 28, 0, 4);
    t_fix_crc(q, nc);
    expect_format_error(q, nc, "version 2 with flags 0 and no Potts or dReLU units: such a "
                               "model is saved as version 1");
    /* A version-2 image called version 1 reads categories and flags as
     * sizes[0]; a version-1 image called version 2 reads sizes[0] = 6 as
     * categories. */
    memcpy(q, cbase, nc);
    put_le(q + OFF_VERSION, 1, 4);
    t_fix_crc(q, nc);
    expect_format_error(q, nc, "sizes[0] is 4294967297");
    free(q);
    q = copy_image(base, n);
    put_le(q + OFF_VERSION, 2, 4);
    t_fix_crc(q, n);
    expect_format_error(q, n, "categories is 6");
    free(q);

    /* A GRBM with offsets: version 2, categories 1, flags 1, and its 10
     * units' offsets after the parameters. */
    const size_t ng2 = ng + 8 + 40;
    q = malloc(ng2);
    ck_assert_ptr_nonnull(q);
    memcpy(q, gbase, 24);
    put_le(q + OFF_VERSION, 2, 4);
    put_le(q + 24, 1, 4);
    put_le(q + 28, 1, 4);
    memcpy(q + 32, gbase + 24, ng - 28);
    for (int j = 0; j < 10; j++) {
        put_le(q + ng + 4 + 4 * (size_t)j, j == 8 ? 0x3f000000u : 0u, 4); /* 0.5f at unit 8 */
    }
    t_fix_crc(q, ng2);
    expect_format_error(q, ng2, "invalid offset: offsets[8] (layer 1, unit 1) is 0.5",
                        "Gaussian visible units has no offsets");
    free(q);

    free(base);
    free(gbase);
    free(cbase);
    ebm_model_destroy(rbm);
    ebm_model_destroy(grbm);
    ebm_model_destroy(cdbm);
}
END_TEST

/* A header, sizes and param_count for a binary RBM of the given sizes, then
 * body_params zero parameters and a CRC: a short file declaring a big shape. */
static unsigned char *big_shape_file(uint64_t n0, uint64_t n1, uint64_t count, size_t body_params,
                                     size_t *n)
{
    static const unsigned char magic[8] = {0x89, 'E', 'B', 'M', '\r', '\n', 0x1a, '\n'};
    *n = off_params(2) + 4 * body_params + 4;
    unsigned char *p = calloc(*n, 1);
    ck_assert_ptr_nonnull(p);
    memcpy(p, magic, 8);
    put_le(p + OFF_VERSION, 1, 4);
    put_le(p + OFF_LAYERS, 2, 4);
    put_le(p + OFF_SIZES, n0, 8);
    put_le(p + OFF_SIZES + 8, n1, 8);
    put_le(p + off_count(2), count, 8);
    t_fix_crc(p, *n);
    return p;
}

/* Load p[0..n) and return the result code, the message in err. */
static int load_rc(const unsigned char *p, size_t n, char *err, size_t size)
{
    ebm_model_t *m = NULL;
    err[0] = '\0';
    int rc = ebm_model_load_buffer(&m, p, n, err, size);
    ebm_model_destroy(m);
    return rc;
}

START_TEST(test_no_allocation_for_declared_shape)
{
    /* Each file is under 100 bytes but declares gigabytes (or more) of
     * parameters. With the address space capped near its current size, a
     * loader that allocated for the declared shape would get EBM_ENOMEM
     * (uncapped, it would take seconds to zero the memory and hit the
     * timeout). Sanitizers reserve address space of their own: no cap. */
    struct rlimit old;
    int capped = 0;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    capped = cap_address_space(&old);
#endif
    static const struct {
        uint64_t n0, n1, count;
        size_t body;
        const char *expect;
    } cases[] = {
        /* 40000 x 40000 is a valid shape: 1.6e9 weights, 19 GB in a model. */
        {40000, 40000, 40000ull * 40000ull + 80000ull, 3,
         "file is 64 bytes; the header declares 6400320052"},
        {40000, 40000, 5, 5, "param_count is 5; the shape has 1600080000 parameters"},
        /* The width fits in 2^31 - 1 but the weights (about 2^60) do not. */
        {(1u << 30) - 1, 1u << 30, 5, 5, "param_count is 5"},
        /* A width over 2^31 - 1: the shape itself is rejected. */
        {2147483647u, 2147483647u, 5, 5, "invalid shape: "},
    };
    enum { N_CASES = sizeof cases / sizeof cases[0] };
    int rc[N_CASES];
    char err[N_CASES][512];
    for (int i = 0; i < N_CASES; i++) {
        size_t n;
        unsigned char *p = big_shape_file(cases[i].n0, cases[i].n1, cases[i].count,
                                          cases[i].body, &n);
        rc[i] = load_rc(p, n, err[i], sizeof err[i]);
        free(p);
    }
    void *big = NULL;
    if (capped) {
        big = malloc((size_t)1 << 31); /* the cap works: this must fail */
        uncap_address_space(&old);
    }
    free(big);
    ck_assert_ptr_null(big);
    for (int i = 0; i < N_CASES; i++) {
        ck_assert_msg(rc[i] == EBM_EFORMAT, "case %d: %s (%s)", i, ebm_error_name(rc[i]), err[i]);
        ck_assert_msg(strstr(err[i], cases[i].expect) != NULL, "case %d: \"%s\" lacks \"%s\"", i,
                      err[i], cases[i].expect);
    }
}
END_TEST

/* ---- mutations ---------------------------------------------------------- */

static uint64_t rand_below(uint64_t *state, uint64_t n) { return (uint64_t)(t_uniform(state) * n); }

START_TEST(test_random_mutations)
{
    static const uint64_t interesting[] = {0,          1,          2,          3,
                                           7,          32,         33,         0x7fffffffu,
                                           0x80000000u, 0xffffffffu, 1ull << 32, 1ull << 62,
                                           UINT64_MAX};
    unsigned char *base[N_KINDS];
    size_t base_n[N_KINDS];
    for (int kind = 0; kind < N_KINDS; kind++) {
        ebm_model_t *m = sample_model(kind);
        base[kind] = image_of(m, &base_n[kind]);
        ebm_model_destroy(m);
    }
    const size_t cap = 1024;
    unsigned char *q = malloc(cap);
    ck_assert_ptr_nonnull(q);
    uint64_t rng = 2024;
    int loaded = 0;
    for (int iter = 0; iter < 20000; iter++) {
        int kind = (int)rand_below(&rng, N_KINDS);
        size_t n = base_n[kind];
        memcpy(q, base[kind], n);
        int edits = 1 + (int)rand_below(&rng, 3);
        for (int e = 0; e < edits; e++) {
            size_t at = n > 0 ? (size_t)rand_below(&rng, n) : 0;
            switch (rand_below(&rng, 6)) {
            case 0: /* a random byte */
                if (n > 0) {
                    q[at] = (unsigned char)rand_below(&rng, 256);
                }
                break;
            case 1: /* a flipped bit */
                if (n > 0) {
                    q[at] ^= (unsigned char)(1u << rand_below(&rng, 8));
                }
                break;
            case 2: { /* inserted bytes */
                size_t k = 1 + (size_t)rand_below(&rng, 8);
                if (n + k <= cap) {
                    memmove(q + at + k, q + at, n - at);
                    for (size_t i = 0; i < k; i++) {
                        q[at + i] = (unsigned char)rand_below(&rng, 256);
                    }
                    n += k;
                }
                break;
            }
            case 3: /* truncated */
                n = at;
                break;
            case 4: { /* deleted bytes */
                size_t k = 1 + (size_t)rand_below(&rng, 8);
                k = k > n - at ? n - at : k;
                memmove(q + at, q + at + k, n - at - k);
                n -= k;
                break;
            }
            default: { /* a header field set to an edge value */
                size_t field = (size_t)rand_below(&rng, 8);
                size_t off = field < 4 ? 8 + 4 * field : 24 + 8 * (field - 4);
                int bytes = field < 4 ? 4 : 8;
                uint64_t v = interesting[rand_below(&rng, sizeof interesting / sizeof *interesting)];
                if (off + (size_t)bytes <= n) {
                    put_le(q + off, v, bytes);
                }
                break;
            }
            }
        }
        if (rand_below(&rng, 2) == 0) {
            t_fix_crc(q, n);
        }
        /* An exact-size copy, so that any over-read is outside the block. */
        unsigned char *exact = malloc(n > 0 ? n : 1);
        ck_assert_ptr_nonnull(exact);
        memcpy(exact, q, n);
        ebm_model_t *m = (ebm_model_t *)&m;
        char err[512] = "";
        int rc = ebm_model_load_buffer(&m, exact, n, err, sizeof err);
        if (rc == EBM_OK) {
            /* Every byte of a valid file is determined by the model it
             * holds: saving it again gives the same bytes back. */
            loaded++;
            ck_assert_ptr_nonnull(m);
            ck_assert_int_eq(ebm_model_save_size(m), (int64_t)n);
            size_t n2;
            unsigned char *again = image_of(m, &n2);
            ck_assert(memcmp(again, exact, n) == 0);
            float *params = params_of(m);
            for (int64_t i = 0; i < ebm_model_param_count(m); i++) {
                ck_assert(isfinite(params[i]));
            }
            free(params);
            free(again);
            ebm_model_destroy(m);
        } else {
            ck_assert_msg(rc == EBM_EFORMAT, "iteration %d: %s (%s)", iter, ebm_error_name(rc),
                          err);
            ck_assert_ptr_null(m);
            ck_assert_msg(err[0] != '\0', "iteration %d: empty message", iter);
        }
        free(exact);
    }
    /* Some mutations (a parameter byte with the CRC fixed) must load. */
    ck_assert_int_gt(loaded, 0);
    free(q);
    for (int kind = 0; kind < N_KINDS; kind++) {
        free(base[kind]);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Bad input of save, load and the buffers (the fixture models)             */
/* ------------------------------------------------------------------------ */

START_TEST(save_bad_input)
{
    char dir[] = "/tmp/ebm_badinput_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char sub[160], missing[160], file[160], under_file[200];
    snprintf(sub, sizeof sub, "%s/adir", dir);
    snprintf(missing, sizeof missing, "%s/no/such/dir/m.ebm", dir);
    snprintf(file, sizeof file, "%s/plain", dir);
    snprintf(under_file, sizeof under_file, "%s/m.ebm", file);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    t_write_file(file, "not a directory", 15);

    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_rbm, NULL);
    FAILS(&s, EBM_ENULL, "path", NULL, ebm_model_save(g_rbm, NULL));
    FAILS(&s, EBM_EIO, missing, NULL, ebm_model_save(g_rbm, missing));
    FAILS(&s, EBM_EIO, NULL, NULL, ebm_model_save(g_rbm, ""));
    /* path is a directory: the rename fails; the directory and its parent
     * are left as they were (no temporary file behind). */
    FAILS(&s, EBM_EIO, sub, NULL, ebm_model_save(g_rbm, sub));
    struct stat st;
    CHECK(stat(sub, &st) == 0 && S_ISDIR(st.st_mode) && t_count_entries(sub) == 0,
          "save over a directory changed it");
    CHECK(t_count_entries(dir) == 2, "a failed save left %d entries in %s (want 2)",
          t_count_entries(dir), dir);
    /* A path under a regular file. */
    FAILS(&s, EBM_EIO, under_file, NULL, ebm_model_save(g_rbm, under_file));
    CHECK(stat(file, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 15,
          "a failed save changed %s", file);
    CHECK(t_count_entries(dir) == 2, "a failed save left %d entries in %s (want 2)",
          t_count_entries(dir), dir);
    (void)unlink(file);
    (void)rmdir(sub);
    (void)rmdir(dir);
    FINISH();
}
END_TEST

/* A load that must fail: code, errbuf message, *out NULL. */
static void load_fails(int line, int rc, ebm_model_t *out, int code, const char *eb,
                       const char *n1)
{
    if (rc != code) {
        t_soft_fail_at(__FILE__, line, "load returned %s, expected %s: \"%s\"", ebm_error_name(rc),
                       ebm_error_name(code), eb);
    }
    if (out != NULL) {
        t_soft_fail_at(__FILE__, line, "a failed load left *out non-NULL");
        if (rc == EBM_OK) {
            ebm_model_destroy(out);
        }
    }
    if (eb[0] == '\0') {
        t_soft_fail_at(__FILE__, line, "a failed load left errbuf empty");
    } else if (n1 != NULL && !t_contains(eb, n1)) {
        t_soft_fail_at(__FILE__, line, "load: errbuf \"%s\" does not mention \"%s\"", eb, n1);
    }
}

static char g_dummy_model; /* a non-NULL *out to see that failures set NULL */
#define DUMMY ((ebm_model_t *)(void *)&g_dummy_model)

START_TEST(load_bad_input)
{
    char dir[] = "/tmp/ebm_badinput_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char missing[160], garbage[160], empty[160];
    snprintf(missing, sizeof missing, "%s/missing.ebm", dir);
    snprintf(garbage, sizeof garbage, "%s/garbage.ebm", dir);
    snprintf(empty, sizeof empty, "%s/empty.ebm", dir);
    char junk[100];
    memset(junk, 'x', sizeof junk);
    t_write_file(garbage, junk, sizeof junk);
    t_write_file(empty, junk, 0);

    char eb[256];
    ebm_model_t *out;
    int rc;
    eb[0] = '\0';
    rc = ebm_model_load(NULL, garbage, eb, sizeof eb);
    load_fails(__LINE__, rc, NULL, EBM_ENULL, eb, "out");
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load(&out, NULL, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_ENULL, eb, "path");
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load(&out, missing, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EIO, eb, missing);
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load(&out, "", eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EIO, eb, NULL);
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load(&out, dir, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EIO, eb, dir);
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load(&out, garbage, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EFORMAT, eb, NULL);
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load(&out, empty, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EFORMAT, eb, NULL);
    /* errbuf NULL, size 0, short */
    out = DUMMY;
    rc = ebm_model_load(&out, missing, NULL, 50);
    CHECK(rc == EBM_EIO && out == NULL, "load(errbuf NULL) returned %s", ebm_error_name(rc));
    memset(eb, 'Z', sizeof eb);
    rc = ebm_model_load(&out, missing, eb, 0);
    CHECK(rc == EBM_EIO && eb[0] == 'Z', "load(errbuf_size 0) returned %s or wrote errbuf",
          ebm_error_name(rc));
    rc = ebm_model_load(&out, missing, eb, 8);
    CHECK(rc == EBM_EIO && memchr(eb, '\0', 8) != NULL && strlen(eb) == 7 && eb[8] == 'Z',
          "load(errbuf_size 8) did not truncate to 7 characters");
    (void)unlink(garbage);
    (void)unlink(empty);
    (void)rmdir(dir);
    FINISH();
}
END_TEST

START_TEST(buffer_bad_input)
{
    int64_t need = ebm_model_save_size(g_rbm);
    ck_assert_int_gt(need, 0);
    size_t cap = (size_t)need + 16;
    unsigned char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    t_sentinel(buf, cap);
    size_t size = 12345;
    char want[32];
    snprintf(want, sizeof want, "%lld", (long long)(need - 1));
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_rbm, NULL);
    t_snap_track(&s, "buf", buf, cap);
    t_snap_track(&s, "*size", &size, sizeof size);
    FAILS(&s, EBM_ENULL, "buf", NULL, ebm_model_save_buffer(g_rbm, NULL, cap, &size));
    FAILS(&s, EBM_ENULL, "size", NULL, ebm_model_save_buffer(g_rbm, buf, cap, NULL));
    FAILS(&s, EBM_ESHAPE, "cap", want, ebm_model_save_buffer(g_rbm, buf, (size_t)need - 1, &size));
    FAILS(&s, EBM_ESHAPE, "cap", "0", ebm_model_save_buffer(g_rbm, buf, 0, &size));
    OK(g_rbm, ebm_model_save_buffer(g_rbm, buf, cap, &size));
    CHECK(size == (size_t)need, "save_buffer wrote %zu bytes, save_size is %lld", size,
          (long long)need);

    /* load_buffer: errbuf messages, *out NULL, buf untouched. */
    char eb[256];
    ebm_model_t *out = DUMMY;
    uint64_t hb = t_checksum(buf, cap);
    int rc;
    eb[0] = '\0';
    rc = ebm_model_load_buffer(NULL, buf, size, eb, sizeof eb);
    load_fails(__LINE__, rc, NULL, EBM_ENULL, eb, "out");
    eb[0] = '\0';
    rc = ebm_model_load_buffer(&out, NULL, size, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_ENULL, eb, "buf");
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load_buffer(&out, buf, 0, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EFORMAT, eb, NULL);
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load_buffer(&out, buf, size - 1, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EFORMAT, eb, NULL);
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load_buffer(&out, buf, size + 1, eb, sizeof eb); /* a trailing byte */
    load_fails(__LINE__, rc, out, EBM_EFORMAT, eb, NULL);
    CHECK(t_checksum(buf, cap) == hb, "ebm_model_load_buffer changed buf");
    buf[0] ^= 0x20; /* wrong magic */
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load_buffer(&out, buf, size, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EFORMAT, eb, NULL);
    buf[0] ^= 0x20;
    rc = ebm_model_load_buffer(&out, buf, size, NULL, 0);
    CHECK(rc == EBM_OK && out != NULL, "load_buffer of a good image after failures: %s",
          ebm_error_name(rc));
    if (rc == EBM_OK) {
        CHECK(t_model_hash(out) == t_model_hash(g_rbm), "loaded model differs");
        ebm_model_destroy(out);
    }
    free(buf);
    FINISH();
}
END_TEST

Suite *ebm_io_suite(void)
{
    const t_test tests[] = {
        {"known answers", test_crc32_known_answer, 0, 30, NULL, NULL},
        {"known answers", test_golden_bytes, 0, 30, NULL, NULL},
        {"known answers", test_golden_bytes_v2, 0, 30, NULL, NULL},
        {"round trip", test_buffer_round_trip, 0, 30, NULL, NULL},
        {"round trip", test_file_round_trip, 0, 30, NULL, NULL},
        {"files", test_save_replaces_existing_file, 0, 30, NULL, NULL},
        {"files", test_save_failures_leave_no_trace, 0, 30, NULL, NULL},
        {"files", test_load_file_errors, 0, 30, NULL, NULL},
        {"bad input", test_null_and_capacity, 0, 30, t_fixture_setup, t_fixture_teardown},
        {"bad input", save_bad_input, 0, 30, t_fixture_setup, t_fixture_teardown},
        {"bad input", load_bad_input, 0, 30, t_fixture_setup, t_fixture_teardown},
        {"bad input", buffer_bad_input, 0, 30, t_fixture_setup, t_fixture_teardown},
        {"damage", test_every_truncation, 0, 60, NULL, NULL},
        {"damage", test_every_bit_flip, 0, 60, NULL, NULL},
        {"damage", test_each_malformation, 0, 30, NULL, NULL},
        {"damage", test_version_2_malformations, 0, 30, NULL, NULL},
        {"allocation", test_no_allocation_for_declared_shape, 0, 10, NULL, NULL},
        {"mutations", test_random_mutations, 0, 120, NULL, NULL},
    };
    return t_suite("io", tests, sizeof tests / sizeof tests[0]);
}
