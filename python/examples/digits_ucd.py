"""A 64-16 RBM on scikit-learn's 8x8 digits, trained by unbiased contrastive divergence.

With 16 hidden units log Z is exact (2^16 terms), so so is the log-likelihood.
"""
import sys

import numpy as np
from sklearn.datasets import load_digits

import ebm

X = (load_digits().data / 16 > 0.5).astype(np.float32)  # 1797 binary images of 64 pixels
train, test = X[:1500], X[1500:]
epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 50

rng, shuffle = ebm.Generator(seed=1), np.random.default_rng(1)
model = ebm.RBM(64, 16).init(rng, "gaussian", scale=0.1)
ucd = ebm.Estimator(model, "ucd", k=1)
for epoch in range(1, epochs + 1):
    for batch in np.array_split(shuffle.permutation(train), 15):  # batches of 100
        model.axpy_params(0.1, ucd.gradient(batch, rng))  # gradient ascent on log p
    if epoch % 5 == 0 or epoch == epochs:
        log_z = model.log_partition("exact")
        print("epoch %3d  log-likelihood per image: train %.3f  test %.3f  (tau %.1f)" % (
            epoch, model.log_likelihood(train, log_z).mean(),
            model.log_likelihood(test, log_z).mean(), ucd.stats["tau_mean"]))
