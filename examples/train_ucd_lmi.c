/*
 * Train a deep Boltzmann machine end to end, without layer-wise pretraining,
 * by unbiased contrastive divergence with local mode initialisation
 * (UCD-LMI; Taniguchi et al. 2023, Alg. 2), on binarised Fashion-MNIST,
 * MNIST or bars-and-stripes. docs/demo.md has the protocol and results.
 *
 * Defaults, from the paper and its published code (unbiased_dbm): a DBM with
 * as many units in each hidden layer as visible units (appendix C), spin
 * units (the simplified centering trick, section 4.1), orthogonal weights and
 * Logistic(0, 0.5) biases (section 4.3, appendix B; ebm_model_init), the
 * estimator averaging the even and odd marginal energies (section 4.2, eq.
 * 27; EBM_MARGINALIZE_BOTH, the library's default for UCD-LMI), k = 0 and
 * no cap on the coupling (unbiased), SGD with lr 0.01 decayed as
 * 1/sqrt(1 + 1e-3 t), mini-batches of 1000 drawn with replacement, 1-bit
 * threshold binarisation at 0.5.
 *
 * The loop, options, outputs, checkpoints and evaluation are shared with
 * train_ucd and train_pcd: examples/common/trainer.h.
 */
#include <ebm.h>

#include "common/trainer.h"

int main(int argc, char **argv)
{
    trainer_config c;
    trainer_defaults(&c, EBM_ESTIMATOR_UCD_LMI, "train_ucd_lmi", "UCD-LMI");
    return trainer_main(&c, argc, argv);
}
