#!/usr/bin/env python3
"""Bars-and-stripes trained by CD-1, PCD-1, UCD and UCD-LMI: the Python twin of
examples/bas_ucd.c (Qiu et al. 2020, section 6.1; docs/bas.md has the protocol).

An RBM with 16 visible and 16 hidden binary units learns the 32 rows of 4x4
bars-and-stripes by plain SGD, theta += lr * g. Every gradient has the exact
positive phase over the 32 rows and a negative phase from --chains chains:

 - pcd: the estimator gets the 32 rows and keeps --chains persistent chains,
   started at uniformly drawn data rows with h ~ p(h | v).
 - cd, ucd, ucd-cap, ucd-lmi: the estimator gets B = --chains rows drawn
   uniformly from the 32 (one chain each); one energy_grad call with
   coefficients counts_i / B - 1/32 then swaps the positive phase of the
   drawn rows for the exact one. ucd and ucd-cap couple by --coupling (crn
   by default, as the C program); ucd-cap stops a chain after --cap coupling
   steps (biased); ucd-lmi uses the library's defaults (k = 0).

It makes the same calls as the C program, in the same order, with the same
random streams (initial model: seed, stream 0; method i of METHODS: stream
i + 1), so for equal options its final models equal those of
`build/examples/bas_ucd --save DIR` (python/tests/test_examples.py checks).

    PYTHONPATH=python python3 python/examples/bas_ucd.py --methods ucd,pcd --iters 2000
"""
import argparse
import os

import numpy as np

import ebm

METHODS = ["cd", "pcd", "ucd", "ucd-cap", "ucd-lmi"]  # the C program's table order
N_VIS = N_HID = 16


def bas(d=4):
    """The 2^(d+1) rows of d x d bars-and-stripes, in examples/common/bas.c's order."""
    bits = (np.arange(2 ** d)[:, None] >> np.arange(d - 1, -1, -1)) & 1
    stripes, bars = np.repeat(bits, d, axis=1), np.tile(bits, d)  # rows, columns constant
    return np.stack([stripes, bars], axis=1).reshape(-1, d * d).astype(np.float32)


def initial_params(seed):
    """W from ebm_model_init (N(0, 0.1^2)), then b and c ~ N(0, 0.1^2) from the same stream."""
    m, rng = ebm.RBM(N_VIS, N_HID), ebm.Generator(seed, 0)
    theta = m.init(rng, "gaussian", 0.1).params()
    for l in (0, 1):
        off, _, cols = m.param_block("bias", l)
        theta[off:off + cols] = rng.normal(cols) * np.float32(0.1)
    return theta


def draw_rows(data, rng, b):
    """b rows drawn uniformly from data (row floor(n u), in float32) and their counts."""
    n = len(data)
    i = np.minimum((rng.uniform(b) * np.float32(n)).astype(np.int64), n - 1)
    return data[i], np.bincount(i, minlength=n)


def train(name, data, theta, a):
    """Train one method from theta; returns the final model."""
    m, rng = ebm.RBM(N_VIS, N_HID), ebm.Generator(a.seed, METHODS.index(name) + 1)
    m.set_params(theta)
    opts = {} if name == "ucd-lmi" else {"k": 1}
    if name == "ucd-cap":
        opts["max_steps"] = a.cap
    if name in ("ucd", "ucd-cap"):
        opts["coupling"] = a.coupling
    if name == "pcd":
        opts["chains"] = a.chains
    est = ebm.Estimator(m, {"ucd-cap": "ucd", "ucd-lmi": "ucd_lmi"}.get(name, name), **opts)
    if name == "pcd":
        est.chains = m.layer_sample(draw_rows(data, rng, a.chains)[0], 1, rng)
    n, taus, tau_max = len(data), [], 0.0
    for it in range(a.iters + 1):
        if it % a.every == 0 or it == a.iters:
            ll = m.log_likelihood(data).sum()  # exact: log Z by enumeration
            tau = " tau %.2f (max %.0f)" % (np.mean(taus), tau_max) if taus else ""
            print("%-8s it %6d/%d  loglik %9.3f (%.4f/row)%s" % (name, it, a.iters, ll,
                                                                  ll / n, tau), flush=True)
            taus, tau_max = [], 0.0
        if it == a.iters:
            return m
        if name == "pcd":
            grad = est.gradient(data, rng)
        else:
            rows, counts = draw_rows(data, rng, a.chains)
            grad = est.gradient(rows, rng)
            m.energy_grad(data, counts / a.chains - 1.0 / n, sum_out=[1], out=grad)
        m.axpy_params(np.float32(a.lr), grad)
        if name.startswith("ucd"):
            stats = est.stats
            taus.append(stats["tau_mean"])
            tau_max = max(tau_max, stats["tau_max"])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--methods", default=",".join(METHODS), help="from " + ", ".join(METHODS))
    p.add_argument("--iters", type=int, default=10000, help="SGD iterations")
    p.add_argument("--lr", type=float, default=0.1, help="learning rate")
    p.add_argument("--chains", type=int, default=1000, help="chains of the negative phase")
    p.add_argument("--every", type=int, default=50, help="exact log-likelihood every N its")
    p.add_argument("--cap", type=int, default=100, help="ucd-cap's cap on coupling steps")
    p.add_argument("--coupling", choices=["maximal", "crn", "blockwise"], default="crn",
                   help="the coupling of ucd's and ucd-cap's Gibbs chains")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--save", metavar="DIR", help="save each final model to DIR/bas_<method>.ebm")
    a = p.parse_args(argv)
    names = a.methods.split(",")
    for name in names:
        if name not in METHODS:
            p.error("unknown method %r (one of %s)" % (name, ", ".join(METHODS)))
    data, theta = bas(4), initial_params(a.seed)
    models = {}
    for name in [m for m in METHODS if m in names]:  # in table order, as the C program
        models[name] = train(name, data, theta, a)
        if a.save:
            models[name].save(os.path.join(a.save, "bas_%s.ebm" % name.replace("-", "_")))
    return models


if __name__ == "__main__":
    main()
