"""What the Python layer costs on top of the C call: Estimator.gradient.

For a binary RBM 784-500 at batch 100 (bench/pcd_rbm.c's shape, W ~ N(0,
0.01^2)) and a 4-4 RBM at batch 1 (where the fixed cost shows), and for
PCD-1 and UCD (k = 1), it times in alternating blocks (ABBA order) of calls
on the same estimator, data and generator:
  python  est.gradient(batch, rng, out=grad)            (the package's call)
  ctypes  ebm.lib.ebm_estimator_gradient(e, r, n, ...)  (the bare C call,
          every argument an int prepared beforehand)
and prints the medians and the overhead (python / ctypes - 1). The bare
call still crosses ctypes; that fixed cost is printed too (a no-argument
call), so the overhead against C proper is at most the sum of the two.

    make python && .venv/bin/python python/bench/gradient_overhead.py
"""
import statistics
import sys
import time

import numpy as np

import ebm

BLOCK, ROUNDS = 20, 16


def block(fn):
    t0 = time.perf_counter()
    for _ in range(BLOCK):
        fn()
    return (time.perf_counter() - t0) / BLOCK


def run(what, m, data, kind, opts):
    n, d = data.shape
    est = ebm.Estimator(m, kind, **opts)
    rng = ebm.Generator(3)
    grad = np.empty(m.param_count, np.float32)
    raw = ebm.lib.ebm_estimator_gradient
    args = (est._p, rng._p, n, data.ctypes.data, d, grad.ctypes.data)
    calls = {"python": lambda: est.gradient(data, rng, out=grad), "ctypes": lambda: raw(*args)}
    times = {"python": [], "ctypes": []}
    calls["python"]()  # warm-up (PCD chains start here)
    for r in range(ROUNDS):
        for name in ("python", "ctypes") if r % 2 == 0 else ("ctypes", "python"):
            times[name].append(block(calls[name]))
    tp, tc = (statistics.median(times[k]) for k in ("python", "ctypes"))
    print("%-8s %-4s python %9.4f ms   ctypes %9.4f ms   overhead %+6.2f%% (%+.1f us per call)"
          % (what, kind, 1e3 * tp, 1e3 * tc, 100 * (tp / tc - 1), 1e6 * (tp - tc)))


def main():
    big = ebm.RBM(784, 500)
    big.init(ebm.Generator(1), scheme="gaussian", scale=0.01)
    data = (ebm.Generator(2).uniform(100 * 784) < 0.13).astype(np.float32).reshape(100, 784)
    tiny = ebm.RBM(4, 4)
    tiny.init(ebm.Generator(1))
    print("libebm %s; medians of %d alternating blocks of %d calls" %
          (ebm.version(), ROUNDS, BLOCK))
    fixed = statistics.median(block(ebm.lib.ebm_version_number) for _ in range(200))
    print("ctypes call of a no-argument function: %.2f us" % (1e6 * fixed))
    for what, m, x in (("4-4 b1", tiny, data[:1, :4]), ("784-500", big, data)):
        for kind, opts in (("pcd", {"k": 1, "chains": x.shape[0]}), ("ucd", {"k": 1})):
            run(what, m, x, kind, opts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
