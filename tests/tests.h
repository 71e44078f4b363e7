/* The shared harness of the Check suites (tests/README.md): one suite per
 * public area, each in tests/check_<area>.c exporting ebm_<area>_suite()
 * and listed in main() (tests.c); the helpers every suite may use are
 * declared here and defined in tests.c (allocation-failure injection in
 * fault.c). The reference implementations the tests compare with are in
 * tests/ref_*.c, declared in tests/ref.h. */
#ifndef EBM_TESTS_H
#define EBM_TESTS_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ebm.h"

#if defined(__GNUC__)
#define T_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define T_PRINTF(a, b)
#endif

/* T_ASAN: built with AddressSanitizer (whose shadow memory does not run
 * under an address-space limit, and which slows calls down). */
#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif

/* T_TSAN: built with ThreadSanitizer (which maps terabytes of shadow memory
 * at start: no address-space limit leaves it room). */
#if defined(__SANITIZE_THREAD__)
#define T_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define T_TSAN 1
#endif
#endif

/* Unit kinds, short: the tables of tiny models use them. */
#define B_ EBM_UNITS_BINARY
#define S_ EBM_UNITS_SPIN
#define G_ EBM_UNITS_GAUSSIAN

/* ---- suites --------------------------------------------------------------- */

Suite *ebm_rng_suite(void);         /* check_rng.c */
Suite *ebm_simd_suite(void);        /* check_simd.c */
Suite *ebm_model_suite(void);       /* check_model.c */
Suite *ebm_io_suite(void);          /* check_io.c */
Suite *ebm_energy_suite(void);      /* check_energy.c */
Suite *ebm_conditional_suite(void); /* check_conditional.c */
Suite *ebm_search_suite(void);      /* check_search.c */
Suite *ebm_evaluation_suite(void);  /* check_evaluation.c */
Suite *ebm_sampler_suite(void);     /* check_sampler.c */
Suite *ebm_coupling_suite(void);    /* check_coupling.c */
Suite *ebm_langevin_suite(void);    /* check_langevin.c */
Suite *ebm_tempering_suite(void);   /* check_tempering.c */
Suite *ebm_global_suite(void);      /* check_global.c */
Suite *ebm_centring_suite(void);    /* check_centring.c */
Suite *ebm_potts_suite(void);       /* check_potts.c */
Suite *ebm_drelu_suite(void);       /* check_drelu.c */
Suite *ebm_estimator_suite(void);   /* check_estimator.c */
Suite *ebm_options_suite(void);     /* check_options.c */
Suite *ebm_threads_suite(void);     /* check_threads.c */
Suite *ebm_faults_suite(void);      /* check_faults.c */
Suite *ebm_alloc_suite(void);       /* check_alloc.c */

/* One row of a suite's table (t_suite). Consecutive rows with the same
 * tcase name share one TCase, made with the first row's timeout (seconds;
 * 0: Check's default) and checked fixture (NULL: none). loop > 0 runs the
 * test for _i = 0 .. loop - 1. */
typedef struct t_test {
    const char *tcase;
    const TTest *test;
    int loop;
    double timeout;
    void (*setup)(void);
    void (*teardown)(void);
} t_test;

/* The suite `name` with the tests of the table, in its order. Each test
 * case is tagged "name:tcase" (spaces as '_'), so that CK_EXCLUDE_TAGS can
 * leave it out (make check-valgrind does). */
Suite *t_suite(const char *name, const t_test *tests, size_t n);
/* Registers a test case of a suite made without t_suite (which registers
 * its own): main runs the test cases in worker processes, one at a time
 * each (EBM_TEST_JOBS). */
void t_add_unit(const char *suite, const char *tcase);

/* ---- running ---------------------------------------------------------------- */

/* EBM_TEST_LEVEL from the environment: 1 (default, make check) or 2 (long). */
int t_level(void);
/* n1 at level 1, 10 n1 at EBM_TEST_LEVEL=2 (sample sizes). */
int64_t t_scaled(int64_t n1);
/* EBM_TEST_VERBOSE=1: the statistical tests print their statistics. */
int t_verbose(void);
#define T_VLOG(...)                                                                                \
    do {                                                                                           \
        if (t_verbose()) {                                                                         \
            fprintf(stderr, __VA_ARGS__);                                                          \
        }                                                                                          \
    } while (0)

/* Check's own ck_assert macros record a checkpoint through a pipe on every
 * call, which costs seconds in loops over millions of draws: these only
 * call into Check when they fail. */
#define T_ASSERT_MSG(cond, ...)                                                                    \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            ck_abort_msg(__VA_ARGS__);                                                             \
        }                                                                                          \
    } while (0)
#define T_ASSERT(cond) T_ASSERT_MSG(cond, "Assertion '%s' failed", #cond)

/* malloc / calloc or fail the test (a size of 0 allocates 1 byte). */
void *t_malloc(size_t n);
void *t_calloc(size_t n, size_t size);
/* n floats or fail the test. */
float *t_floats(int64_t n);

/* ---- models, generators, states ---------------------------------------------- */

/* Create a model or fail the test. */
ebm_model_t *t_model(int64_t n_layers, const int64_t *sizes, int visible_units,
                     int hidden_units);
/* Fill every parameter deterministically from seed: weights and biases
 * uniform in [-scale, scale], log-variances uniform in [-1, 1]. */
void t_random_params(ebm_model_t *m, uint64_t seed, double scale);
/* A sampler of kind with the CLAMP_LAYERS and COUPLING options, or fail
 * the test. */
ebm_sampler_t *t_sampler(const ebm_model_t *m, int kind, uint32_t clamp, int coupling);
/* The name of an enum ebm_coupling value, for messages ("MAXIMAL", ...). */
const char *t_coupling_name(int coupling);
/* A generator (seed, stream) or fail the test. */
ebm_rng_t *t_rng(uint64_t seed, uint64_t stream);
/* A started generator: (seed, stream) after `normals` normal draws (1 or
 * 3: a spare normal is kept), so that any move of a call shows in its
 * state. On failure a soft failure and NULL: usable in a child process. */
ebm_rng_t *t_rng_started(uint64_t seed, uint64_t stream, int64_t normals);
/* A deterministic uniform double in [0,1) from a 64-bit state (splitmix64). */
double t_uniform(uint64_t *state);
/* n valid state rows of m with stride ld from seed (binary 0/1, spin -1/+1,
 * Gaussian in [-2, 2]); padding columns hold 0.5, which no call may read. */
void t_fill_states(const ebm_model_t *m, int64_t n, float *x, int64_t ld, uint64_t seed);
/* n rows of means inside each layer's range (binary [0, 1], spin [-1, 1],
 * Gaussian [-2, 2]) from seed; padding columns hold 7, which no call may
 * read. */
void t_fill_means(const ebm_model_t *m, int64_t n, float *mu, int64_t ld, uint64_t seed);
/* Is v a valid state value (mean = 0) or mean (mean = 1) of a unit of kind
 * units? (binary {0, 1} / [0, 1], spin {-1, 1} / [-1, 1], Gaussian finite) */
int t_unit_ok(int units, float v, int mean);
/* Fill n bytes with 0xA5: an output a failed call must leave alone. */
void t_sentinel(void *p, size_t n);

/* ---- checksums: what a failed call must leave alone ---------------------------- */

/* FNV-1a of a byte range. */
uint64_t t_checksum(const void *p, size_t n);
/* CRC-32 (zlib, PNG) computed bit by bit: independent of the library's
 * table, so that agreement checks both. t_fix_crc rewrites the last 4
 * bytes of p[0 .. n) as the little-endian CRC of the rest. */
uint32_t t_crc32(const unsigned char *p, size_t n);
void t_fix_crc(unsigned char *p, size_t n);
/* Of a model's parameters and shape, a generator's state, an estimator's
 * statistics and persistent chains (m: its model). No ck_assert (usable in
 * a child process): a call that fails is a soft failure. */
uint64_t t_model_hash(const ebm_model_t *m);
uint64_t t_rng_hash(const ebm_rng_t *r);
uint64_t t_estimator_hash(const ebm_estimator_t *e, const ebm_model_t *m);

/* 1 if hay (NULL: no) contains needle, ignoring case ("nan" matches "NaN"). */
int t_contains(const char *hay, const char *needle);

/* ---- files ----------------------------------------------------------------------- */

/* dir/name in a new string (free it). */
char *t_path(const char *dir, const char *name);
/* A new private directory $TMPDIR/<prefix>XXXXXX (/tmp without TMPDIR), in a
 * new string (free it), or fail the test. */
char *t_temp_dir(const char *prefix);
/* Remove dir and everything below it. */
void t_rm_tree(const char *dir);
/* The number of names in dir other than . and .. (fails the test if dir
 * cannot be read). */
int t_count_entries(const char *dir);
/* Write n bytes to a new file at path, or fail the test. */
void t_write_file(const char *path, const void *p, size_t n);

/* ---- soft checks ------------------------------------------------------------------ */

/* A soft check prints every broken promise on stderr ("file:line: context:
 * text") and counts it; FINISH() fails the test at its end with the count
 * and the first one, so that one run lists every defect. t_soft_reset()
 * (or the fixtures below) starts each test with none. */
void t_soft_reset(void);
/* Name what is being checked (the prefix of the messages that follow);
 * inside a child process (t_soft_to_pipe) also tell the parent, so that a
 * hang is reported with the call that hung. "%s", "" clears it. */
void t_soft_context(const char *fmt, ...) T_PRINTF(1, 2);
void t_soft_fail_at(const char *file, int line, const char *fmt, ...) T_PRINTF(3, 4);
/* Count and print one line of text that already says where it comes from. */
void t_soft_record(const char *text);
/* In a child process: send failures (and contexts, as "@context" lines)
 * through the pipe fd to the parent instead of printing them. */
void t_soft_to_pipe(int fd);
/* In that child: tell the parent that the body ran to its end ("@@done"). */
void t_soft_child_done(void);
int t_soft_failures(void);
const char *t_soft_first(void);

#define T_SOFT_FAIL(...) t_soft_fail_at(__FILE__, __LINE__, __VA_ARGS__)
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            T_SOFT_FAIL(__VA_ARGS__);                                                              \
        }                                                                                          \
    } while (0)
#define FINISH()                                                                                   \
    ck_assert_msg(t_soft_failures() == 0, "%d check(s) failed (all listed on stderr); first: %s",  \
                  t_soft_failures(), t_soft_first())

/* ---- snapshots: a failed call changes nothing the caller can see ------------------ */

/* Where a failing call must leave its message: nowhere checked, the model
 * (ebm_model_errmsg) or the generator (ebm_rng_errmsg). */
enum { T_MSG_NONE, T_MSG_MODEL, T_MSG_RNG };
#define T_SNAP_MAX 8

typedef struct t_snap {
    const ebm_model_t *m;     /* parameters checksummed; message source if T_MSG_MODEL */
    ebm_rng_t *r;             /* state checksummed; message source if T_MSG_RNG */
    const ebm_estimator_t *e; /* statistics and chains checksummed (model m) */
    int src;
    int n;
    const char *name[T_SNAP_MAX];
    const void *p[T_SNAP_MAX];
    size_t len[T_SNAP_MAX];
    uint64_t h[T_SNAP_MAX];
    uint64_t hm, hr, he;
    char primed[600];
} t_snap;

/* Watch m, r (either may be NULL) with message source src; set s->e to
 * watch an estimator too. */
void t_snap_init(t_snap *s, int src, const ebm_model_t *m, ebm_rng_t *r);
/* Watch a buffer too (checksummed now and at every t_snap_take). */
void t_snap_track(t_snap *s, const char *name, const void *p, size_t len);
/* Leave a known message in the source first (so that the call under test
 * must replace it), then checksum everything watched. */
void t_snap_take(t_snap *s);
/* The message of the source ("" for T_MSG_NONE). */
const char *t_snap_msg(const t_snap *s);
/* A soft failure for each watched thing that changed since t_snap_take. */
void t_snap_same(const t_snap *s, const char *file, int line, const char *call);
/* The call returned rc: it must be code, leave a new message of its own
 * that mentions n1, n2 and n3 (NULL: no requirement), and change nothing. */
void t_snap_verify(const t_snap *s, const char *file, int line, const char *call, int rc,
                   int code, const char *n1, const char *n2, const char *n3);

/* The call must fail with code, its message must mention n1 and n2 (NULL:
 * no requirement beyond a new message) and nothing tracked may change. */
#define FAILS3(s, code, n1, n2, n3, call)                                                          \
    do {                                                                                           \
        t_snap_take(s);                                                                            \
        int rc_ = (int)(call);                                                                     \
        t_snap_verify((s), __FILE__, __LINE__, #call, rc_, (code), (n1), (n2), (n3));              \
    } while (0)
#define FAILS(s, code, n1, n2, call) FAILS3(s, code, n1, n2, NULL, call)

/* A call that must return want (EBM_OK for OK). */
#define OK_RC(m, want, call)                                                                       \
    do {                                                                                           \
        int rc_ = (int)(call);                                                                     \
        if (rc_ != (want)) {                                                                       \
            T_SOFT_FAIL("%s returned %s (%d), expected %d; message \"%s\"", #call,                 \
                        ebm_error_name(rc_), rc_, (want), (m) != NULL ? ebm_model_errmsg(m) : ""); \
        }                                                                                          \
    } while (0)
#define OK(m, call) OK_RC(m, EBM_OK, call)

/* The call must succeed and change nothing tracked (n = 0). */
#define NOOP(s, call)                                                                              \
    do {                                                                                           \
        t_snap_take(s);                                                                            \
        int rc_ = (int)(call);                                                                     \
        if (rc_ != EBM_OK) {                                                                       \
            T_SOFT_FAIL("%s returned %s (%d), expected EBM_OK; message \"%s\"", #call,             \
                        ebm_error_name(rc_), rc_, t_snap_msg(s));                                  \
        }                                                                                          \
        t_snap_same((s), __FILE__, __LINE__, #call);                                               \
    } while (0)

/* ---- fixtures --------------------------------------------------------------------- */

/* The bad-input fixture: a binary RBM 4x3 (t_new_rbm), a spin DBM 3-3-2
 * (t_new_dbm), a GRBM 3x2 (t_new_grbm) with random parameters and a started
 * generator (t_fresh_rng), made by t_fixture_setup (which also resets the
 * soft checks) and freed by t_fixture_teardown. The t_new_* and
 * t_fresh_rng calls make twins of them. */
extern ebm_model_t *g_rbm, *g_dbm, *g_grbm;
extern ebm_rng_t *g_rng;
ebm_model_t *t_new_rbm(void);
ebm_model_t *t_new_dbm(void);
ebm_model_t *t_new_grbm(void);
ebm_rng_t *t_fresh_rng(void);
void t_fixture_setup(void);
void t_fixture_teardown(void);
/* Only the soft-check reset (a checked fixture's setup). */
void t_soft_setup(void);

/* ---- allocation-failure injection (tests/fault.c) ----------------------------------- */

/* After t_fault_arm(n) the n-th allocation (malloc, calloc or realloc;
 * n >= 1) returns NULL; t_fault_disarm() stops it and returns the
 * allocations counted since the arm; t_fault_fired() tells whether the
 * failure happened. */
void t_fault_arm(long n);
long t_fault_disarm(void);
int t_fault_fired(void);

#endif
