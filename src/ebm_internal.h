/* Transitional: every module header, for the tests that have not yet
 * been pointed at the ones they use. */
#ifndef EBM_INTERNAL_H
#define EBM_INTERNAL_H
#include "conditional.h"
#include "energy.h"
#include "error.h"
#include "estimator.h"
#include "kernels.h"
#include "model.h"
#include "numerics.h"
#include "rng.h"
#include "sampler.h"
#include "threads.h"
#endif
