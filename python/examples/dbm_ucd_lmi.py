#!/usr/bin/env python3
"""A deep Boltzmann machine trained end to end by UCD-LMI (Taniguchi et al. 2023).

Unbiased contrastive divergence with local mode initialisation (ebm.Estimator
kind "ucd_lmi"), on Fashion-MNIST binarised at 0.5 (/usr/share/datasets/
fashion-mnist, `apt-get install dataset-fashion-mnist`), or, without it, on
scikit-learn's 8x8 digits binarised at 8/16. As in the paper and
examples/train_ucd_lmi.c: spin units (pixels -> +-1, the simplified centering
trick), orthogonal weights with Logistic(0, 0.5) biases (ebm "orthogonal"
init), the library's UCD-LMI defaults (k = 0, even and odd marginal energies
averaged, no cap: unbiased), SGD with lr / sqrt(1 + gamma t), mini-batches
drawn with replacement. Unlike the paper (n_h = n_v, batch 1000, 100,000
steps) the defaults are small, --hidden 256 --batch 100 --steps 3000, so a
run takes about a minute; the C program trains the full-size model.

At the end: log Z by annealed importance sampling and the mean-field lower
bound on log p(v) of test images, with the same for the initial model.

    PYTHONPATH=python python3 python/examples/dbm_ucd_lmi.py --steps 3000
"""
import argparse
import gzip
import os
import time

import numpy as np

import ebm

FASHION = "/usr/share/datasets/fashion-mnist"


def idx_images(path):
    """The images of an idx3-ubyte.gz file as (n, rows * cols) uint8."""
    with gzip.open(path) as f:
        raw = f.read()
    dims = np.frombuffer(raw, ">u4", raw[3], offset=4)
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * raw[3]).reshape(dims[0], -1)


def load_data(data_dir):
    """(train, test, name): rows of +-1 float32."""
    path = os.path.join(data_dir, "%s-images-idx3-ubyte.gz")
    if os.path.exists(path % "train") and os.path.exists(path % "t10k"):
        train, test, name = idx_images(path % "train"), idx_images(path % "t10k"), "Fashion-MNIST"
        train, test = train / np.float32(255) >= 0.5, test / np.float32(255) >= 0.5
    else:
        from sklearn.datasets import load_digits
        x = load_digits().data >= 8
        train, test, name = x[:1500], x[1500:], "8x8 digits (no Fashion-MNIST in %s)" % data_dir
    return [np.where(x, 1, -1).astype(np.float32) for x in (train, test)] + [name]


def evaluate(m, test, a):
    """(mean bound on log p(v) of the test rows, AIS log Z, its standard error)."""
    log_z, err = m.log_partition("ais", ebm.Generator(a.seed, 2), chains=a.ais_chains,
                                 betas=a.ais_betas, return_std=True)
    return m.log_likelihood_bound(test, log_z).mean(), log_z, err


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=FASHION, help="Fashion-MNIST's idx files")
    p.add_argument("--hidden", type=int, default=256, help="units in each of 2 hidden layers")
    p.add_argument("--steps", type=int, default=3000, help="SGD steps")
    p.add_argument("--batch", type=int, default=100, help="rows per step")
    p.add_argument("--lr", type=float, default=0.01, help="learning rate at step 0")
    p.add_argument("--gamma", type=float, default=1e-3, help="lr / sqrt(1 + gamma t)")
    p.add_argument("--every", type=int, default=250, help="progress every N steps")
    p.add_argument("--test-rows", type=int, default=1000, help="test images evaluated")
    p.add_argument("--ais-chains", type=int, default=100)
    p.add_argument("--ais-betas", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)

    train, test, name = load_data(a.data_dir)
    test = test[:a.test_rows]
    m = ebm.DBM([train.shape[1], a.hidden, a.hidden], "spin")
    m.init(ebm.Generator(a.seed, 0), "orthogonal")
    est = ebm.Estimator(m, "ucd_lmi")
    rng, pick = ebm.Generator(a.seed, 1), np.random.default_rng(a.seed)
    print("%s: %d training images; DBM %s, spin units" % (name, len(train),
                                                          "-".join(map(str, m.sizes))))
    start = evaluate(m, test, a)
    t0, taus, tau_max, sweeps = time.time(), [], 0.0, []
    for t in range(1, a.steps + 1):
        grad = est.gradient(train[pick.integers(0, len(train), a.batch)], rng)
        m.axpy_params(a.lr / np.sqrt(1.0 + a.gamma * (t - 1)), grad)
        s = est.stats
        taus.append(s["tau_mean"])
        tau_max = max(tau_max, s["tau_max"])
        sweeps.append(s["sweeps_mean"])
        if t % a.every == 0 or t == a.steps:
            print("step %6d/%d  tau mean %.3f max %.0f  local-search sweeps %.1f  %.1f s" % (
                t, a.steps, np.mean(taus), tau_max, np.mean(sweeps), time.time() - t0),
                flush=True)
            taus, tau_max, sweeps = [], 0.0, []
    end = evaluate(m, test, a)
    print("mean-field bound on log p(v), mean over %d test images (AIS log Z, %d chains, %d "
          "betas):" % (len(test), a.ais_chains, a.ais_betas))
    for label, (bound, log_z, err) in (("initial", start), ("trained", end)):
        print("  %-8s %10.3f   log Z %.2f +- %.2f" % (label, bound, log_z, err))
    return m, end


if __name__ == "__main__":
    main()
