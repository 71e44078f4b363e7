"""scikit-learn's BernoulliRBM on bench/pcd_rbm.c's workload: one PCD-1 step
(partial_fit on one batch: gradient and SGD update, learning_rate 0.01) of a
binary RBM 784-500, batch 100, 100 persistent chains (batch_size = 100), W
N(0, 0.01^2) and biases 0 (its own initialisation). Data: 1-bit Fashion-MNIST
(grey >= 0.5), the first 6000 training images in 60 batches taken in turn, or
Bernoulli(0.13) rows if it is not installed. The time is the median of 200
steps after 20 warm-up, as pcd_rbm's. scikit-learn computes in float64."""
from peer_common import blas_info, fashion_mnist, report, time_steps  # first: sets the threads

import numpy as np
import sklearn
from sklearn.neural_network import BernoulliRBM

D, H, BATCH, POOL, WARMUP, REPS = 784, 500, 100, 60, 20, 200


def main():
    raw = fashion_mnist(POOL * BATCH)
    if raw is not None:
        source, data = "fashion-mnist", (raw >= 128).astype(np.float64)  # grey >= 0.5
    else:
        source = "bernoulli-0.13"
        data = (np.random.default_rng(1).random((POOL * BATCH, D)) < 0.13).astype(np.float64)
    batches = [np.ascontiguousarray(data[i * BATCH:(i + 1) * BATCH]) for i in range(POOL)]
    rbm = BernoulliRBM(n_components=H, learning_rate=0.01, batch_size=BATCH, n_iter=1,
                       random_state=1)
    print(f"peer_pcd_rbm: scikit-learn {sklearn.__version__} BernoulliRBM.partial_fit (PCD-1 + "
          f"SGD 0.01, float64), RBM {D}-{H}, batch {BATCH}, data {source}; median of {REPS} "
          f"steps after {WARMUP} warm-up")
    ms, timing = time_steps(lambda i: rbm.partial_fit(batches[i % POOL]), WARMUP, REPS)
    report("peer_pcd_rbm", f"scikit-learn {sklearn.__version__} BernoulliRBM", ms,
           "PCD-1 784-500 batch 100",
           {"data": source, "dtype": "float64", "blas": blas_info(), **timing})


if __name__ == "__main__":
    main()
