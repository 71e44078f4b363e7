"""Variance per unit of compute of UCD's gradient on a fixed model.

For each setting (coupling, k, marginalisation) it makes CALLS gradient
estimates on one fixed model and batch (1000 rows, row r = data row r mod
32, 4x4 bars-and-stripes), each with fresh random numbers, and prints:
  var      the total variance of one estimate, sum_i Var(g_i) over the
           parameters, from the CALLS estimates;
  s/call   the mean wall time of one call (1 thread);
  var*s    their product: the variance of an average over one second of
           calls, the figure to compare (lower is better);
  tau      the mean meeting time, and its largest value over the calls.
The variance of heavy-tailed estimates is itself noisy: the last columns give
the share of the variance from the 1% of calls with the largest squared
deviation, so a figure driven by a few calls shows as such.

    make python && OPENBLAS_NUM_THREADS=1 .venv/bin/python \\
        python/bench/ucd_variance.py MODEL.ebm [CALLS]
(MODEL: e.g. build/examples/bas_ucd --methods pcd --save DIR writes
DIR/bas_pcd.ebm). docs/bas.md has the results.
"""
import sys
import time

import numpy as np

import ebm

SETTINGS = [  # (coupling, k, marginalize)
    ("crn", 1, "even"), ("blockwise", 1, "even"), ("maximal", 1, "even"),
    ("crn", 1, "none"), ("crn", 1, "odd"), ("crn", 1, "both"),
    ("crn", 2, "even"), ("crn", 3, "even"),
]


def bas_rows():
    rows = []
    for p in range(16):
        bits = [(p >> (3 - i)) & 1 for i in range(4)]
        stripes = np.repeat(np.array(bits, np.float32)[:, None], 4, axis=1)
        rows += [stripes.ravel(), stripes.T.ravel()]
    return np.array(rows, np.float32)


def main(argv):
    model = ebm.load(argv[0])
    calls = int(argv[1]) if len(argv) > 1 else 200
    data = bas_rows()[np.arange(1000) % 32]
    print("%s, %d calls of 1000 rows each" % (argv[0], calls))
    print("%-10s %2s %-5s %10s %9s %10s %8s %8s %10s" %
          ("coupling", "k", "marg", "var", "s/call", "var*s", "tau", "tau max", "top 1%"))
    for coupling, k, marg in SETTINGS:
        est = ebm.Estimator(model, "ucd", k=k, marginalize=marg, coupling=coupling)
        rng = ebm.Generator(7, 0)
        g = np.empty((calls, model.param_count), np.float64)
        taus, tau_max, t0 = [], 0.0, time.perf_counter()
        for c in range(calls):
            g[c] = est.gradient(data, rng)
            taus.append(est.stats["tau_mean"])
            tau_max = max(tau_max, est.stats["tau_max"])
        sec = (time.perf_counter() - t0) / calls
        dev2 = ((g - g.mean(axis=0)) ** 2).sum(axis=1)
        var = dev2.sum() / (calls - 1)
        top = np.sort(dev2)[-max(1, calls // 100):].sum() / dev2.sum()
        print("%-10s %2d %-5s %10.4g %9.5f %10.4g %8.2f %8.0f %9.0f%%" %
              (coupling, k, marg, var, sec, var * sec, np.mean(taus), tau_max, 100 * top))
        est.close()


if __name__ == "__main__":
    main(sys.argv[1:])
