"""Where global moves stop helping: their acceptance and the meeting time
on models trained on the MNIST digits (a binary RBM 784-500, docs/results.md
section 6's pcd1 run; spin DBMs 784-784-784, section 5's), against CRN alone
and UCD-LMI (docs/global_moves.md, "In high dimension").

The proposal rows: the 10,000 digits of build/data/mnist (make mnist-data),
thresholded at 0.5 as the trainer's --binarize threshold (as -1/+1 for a
model with spin visible units). For each setting
PAIRS chain pairs start as UCD starts them (global_moves.py's tau_law) from
digits, with at most CAP coupled steps: printed are tau's mean, median, p99,
max, the share of pairs not met within CAP, and the global moves' acceptance
(one chain; both). UCD-LMI: one gradient of PAIRS digits with at most CAP
steps per chain (EBM_ESTIMATOR_MAX_STEPS), its mean tau, capped chains and MH
moves accepted.

    make mnist-data
    OPENBLAS_NUM_THREADS=1 .venv/bin/python python/bench/global_moves_mnist.py \\
        MODEL.ebm [PAIRS [CAP]]
"""
import glob
import json
import os
import sys

import numpy as np

import ebm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from global_moves import tau_law  # noqa: E402


def digits(root):
    rows = []
    for path in sorted(glob.glob(os.path.join(root, "build/data/mnist/package/src/digits/*.json"))):
        with open(path) as f:
            rows.append(np.asarray(json.load(f)["data"], np.float32).reshape(-1, 784))
    return (np.concatenate(rows) >= 0.5).astype(np.float32)


def main(argv):
    model = ebm.load(argv[0])
    pairs = int(argv[1]) if len(argv) > 1 else 500
    cap = int(argv[2]) if len(argv) > 2 else 1000
    root = os.environ.get("EBM_REPO", ".")
    data = digits(root)
    if model.units[0] == ebm.Units.SPIN:
        data = 2.0 * data - 1.0
    # shuffled: tau_law starts the pairs from the first rows (the order does
    # not change q)
    data = data[np.random.default_rng(1).permutation(len(data))]
    starts = data[:pairs]
    print("%s: %d digits as proposal rows, %d pairs, at most %d steps" %
          (argv[0], len(data), pairs, cap))
    print("%-22s %8s %5s %6s %6s %8s %7s %7s" %
          ("setting", "tau mean", "med", "p99", "max", "not met", "acc", "both"))
    for name, p, eps in (("crn", None, None), ("global 0.5, eps 0.001", 0.5, 0.001),
                         ("global 0.5, eps 0.005", 0.5, 0.005),
                         ("global 0.5, eps 0.02", 0.5, 0.02)):
        tau, acc, both = tau_law(model, data, "crn", p, eps, pairs, 1, cap=cap)
        q = np.percentile(tau, [50, 99])
        print("%-22s %8.2f %5.0f %6.0f %6d %8.3f %7.4f %7.4f" %
              (name, tau.mean(), q[0], q[1], tau.max(), np.mean(tau > cap), acc, both))
        sys.stdout.flush()
    e = ebm.Estimator(model, "ucd_lmi", max_steps=cap)
    e.gradient(starts, ebm.Generator(7, 0))
    st = e.stats
    print("ucd_lmi: tau mean %.2f, max %.0f, capped %.0f of %d, MH moves accepted %.0f" %
          (st["tau_mean"], st["tau_max"], st["capped"], pairs, st["mh_accepted"]))


if __name__ == "__main__":
    main(sys.argv[1:])
