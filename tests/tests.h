/* Shared declarations of the Check suites: one suite per area, each in
 * tests/check_<area>.c exporting ebm_<area>_suite(). */
#ifndef EBM_TESTS_H
#define EBM_TESTS_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "ebm.h"

Suite *ebm_rng_suite(void);
Suite *ebm_model_suite(void);
Suite *ebm_exact_suite(void);
Suite *ebm_io_suite(void);
Suite *ebm_badinput_suite(void);
Suite *ebm_langevin_suite(void);
Suite *ebm_sampler_suite(void);
Suite *ebm_estimator_suite(void);
Suite *ebm_evaluation_suite(void);
Suite *ebm_threads_suite(void);
Suite *ebm_simd_suite(void);
Suite *ebm_faults_suite(void);
Suite *ebm_alloc_suite(void);

/* EBM_TEST_LEVEL from the environment: 1 (default, make check) or 2 (long). */
int t_level(void);
/* Create a model or fail the test. */
ebm_model_t *t_model(int64_t n_layers, const int64_t *sizes, int visible_units,
                     int hidden_units);
/* Fill every parameter deterministically from seed: weights and biases
 * uniform in [-scale, scale], log-variances uniform in [-1, 1]. */
void t_random_params(ebm_model_t *m, uint64_t seed, double scale);
/* FNV-1a of a byte range: to show that a failed call changed nothing. */
uint64_t t_checksum(const void *p, size_t n);
/* A deterministic uniform double in [0,1) from a 64-bit state (splitmix64). */
double t_uniform(uint64_t *state);
/* n valid state rows of m with stride ld from seed (binary 0/1, spin -1/+1,
 * Gaussian in [-2, 2]); padding columns hold 0.5, which no call may read. */
void t_fill_states(const ebm_model_t *m, int64_t n, float *x, int64_t ld, uint64_t seed);
/* n rows of means inside each layer's range (binary [0, 1], spin [-1, 1],
 * Gaussian [-2, 2]) from seed; padding columns hold 7, which no call may
 * read. */
void t_fill_means(const ebm_model_t *m, int64_t n, float *mu, int64_t ld, uint64_t seed);
/* 1 if hay (NULL: no) contains needle, ignoring case ("nan" matches "NaN"). */
int t_contains(const char *hay, const char *needle);

/* Allocation-failure injection (tests/fault.c): after t_fault_arm(n) the
 * n-th allocation (malloc, calloc or realloc; n >= 1) returns NULL;
 * t_fault_disarm() stops it and returns the allocations counted since the
 * arm; t_fault_fired() tells whether the failure happened. */
void t_fault_arm(long n);
long t_fault_disarm(void);
int t_fault_fired(void);

#endif
