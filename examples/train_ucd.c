/*
 * Train an RBM (or DBM) by unbiased contrastive divergence (UCD; Qiu et al.
 * 2020, Alg. 2): coupled Gibbs chains started at the data, run until they
 * meet and at least k steps, give an unbiased gradient.
 *
 * Defaults from Qiu et al. section 6.3: a binary RBM with 1000 hidden units
 * on Fashion-MNIST binarised by Bernoulli draws (fresh for every batch),
 * mini-batches of 1000, SGD with lr 0.1, k = 1, the library's default
 * coupling (for a binary RBM EBM_COUPLING_CRN, their Alg. 3; for DBMs and
 * spin units EBM_COUPLING_BLOCKWISE), weights N(0, 0.1^2) as in their code
 * (biases zero).
 * Coupling times grow quickly with the model; --cap bounds them (biased,
 * counted in the progress line and the CSV).
 *
 * Options and outputs: examples/common/trainer.h (--help lists them).
 */
#include <ebm.h>

#include "common/trainer.h"

int main(int argc, char **argv)
{
    trainer_config c;
    trainer_defaults(&c, EBM_ESTIMATOR_UCD, "train_ucd", "UCD");
    return trainer_main(&c, argc, argv);
}
