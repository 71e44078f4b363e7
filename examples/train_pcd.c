/*
 * Train an RBM or DBM by persistent contrastive divergence (PCD-k, Tieleman
 * 2008), the baseline of Taniguchi et al. (2023, Table 2 and Fig. 2): with
 * the same model, initialisation, data and optimiser as train_ucd_lmi, but a
 * biased gradient: persistent Gibbs chains (one per batch row by default,
 * started from uniform noise) for the negative phase and, for a DBM, the
 * mean-field posterior for the positive phase (Salakhutdinov and Hinton
 * 2009; EBM_POSITIVE_AUTO). Without pretraining this is expected to fail on
 * DBMs; docs/demo.md shows it beside UCD-LMI.
 *
 * Options and outputs: examples/common/trainer.h (--help lists them).
 */
#include <ebm.h>

#include "common/trainer.h"

int main(int argc, char **argv)
{
    trainer_config c;
    trainer_defaults(&c, EBM_ESTIMATOR_PCD, "train_pcd", "PCD");
    return trainer_main(&c, argc, argv);
}
