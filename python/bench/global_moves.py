"""Global moves from data rows on a fixed bars-and-stripes model: the law of
the meeting time and the inefficiency of UCD's estimate, against CRN and
BLOCKWISE (docs/global_moves.md, "Measurements").

For each setting (the coupling; with global moves, p = 1 - global_prob, the
chance that a step is the coupling's sweep, and flip_prob, the proposal's
flips; the proposal rows are the 32 patterns):
  tau law  PAIRS chain pairs started as UCD starts them (x_0 = a data row
           with h ~ p(h | v), y_0 = x_0, x_1 one step of x_0), coupled steps
           until x_t = y_{t-1}; tau = that t (1 if x_1 = y_0). Printed: mean,
           median, p99, p99.9, max; and the global moves' acceptance and
           how often both chains accepted (over the coupled steps).
  ineff.   CALLS UCD gradients (k = 1, f with v summed out) of 1000 rows
           (row r = data row r mod 32) with fresh random numbers: the trace
           of one chain's estimate's covariance (1000 x that of a call) x
           the sweeps per estimate (2 tau - 1: x runs tau steps, y tau - 1;
           a global move counts as a sweep), its ratio to CRN's, the wall
           time per call, and var x s: a call's total variance x its time
           (the variance of an average over one second of calls, as
           ucd_variance.py).

    OPENBLAS_NUM_THREADS=1 .venv/bin/python python/bench/global_moves.py \\
        DIR/bas_pcd.ebm [PAIRS [CALLS [SETTINGS]]]
SETTINGS: comma-separated names from the list printed (default: all).
(MODEL: build/examples/bas_ucd --methods pcd --save DIR writes DIR/bas_pcd.ebm.)
"""
import os
import sys
import time

import numpy as np

import ebm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ucd_variance import bas_rows  # noqa: E402

ROWS = 1000


def settings():
    """[(name, coupling, p, flip_prob)]; p None: no global moves."""
    out = [("crn", "crn", None, None), ("blockwise", "blockwise", None, None)]
    for p in (0.5, 0.8, 0.95):
        for eps in (0.02, 0.05, 0.1):
            out.append(("p%g-e%g" % (p, eps), "crn", p, eps))
    return out


def options(coupling, p, eps, data):
    o = {"coupling": coupling}
    if p is not None:
        o.update(global_prob=1.0 - p, proposal=(data, eps))
    return o


def tau_law(model, data, coupling, p, eps, pairs, seed, cap=None):
    """Every pair's tau (cap: at most that many steps, the pairs not met by
    then get tau = cap + 1), and the global moves' (acceptance, both) over
    the steps."""
    s = ebm.Sampler(model, "gibbs", **options(coupling, p, eps, data))
    rng = ebm.Generator(seed, 0)
    n0, w = model.n_visible, model.state_width
    x = np.zeros((pairs, w), np.float32)
    x[:, :n0] = data[np.arange(pairs) % len(data)]
    for l in range(1, model.n_layers):  # spin layers start at +1 (0 is not a state)
        if model.units[l] == ebm.Units.SPIN:
            x[:, model.offsets[l]:model.offsets[l] + model.sizes[l]] = 1.0
    for l in range(1, model.n_layers):  # the hidden layers drawn upward from the data
        x = model.layer_sample(x, l, rng)
    y = x.copy()
    s.step(x, rng)
    tau = np.zeros(pairs, np.int64)
    live = np.flatnonzero(~np.all(x == y, axis=1))
    tau[np.all(x == y, axis=1)] = 1
    t, acc, both, moves = 1, 0.0, 0.0, 0.0
    while live.size and (cap is None or t < cap):
        xs, ys = x[live], y[live]
        met = s.coupled_step(xs, ys, rng)
        t += 1
        st = s.stats
        if p is not None and not np.isnan(st["global_accept_rate"]):
            k = live.size * (1.0 - p)  # the expected number of global moves
            acc += st["global_accept_rate"] * k
            both += st["global_both_rate"] * k
            moves += k
        x[live], y[live] = xs, ys
        tau[live[met]] = t
        live = live[~met]
    tau[live] = t + 1
    return tau, (acc / moves if moves else float("nan")), (both / moves if moves else float("nan"))


def inefficiency(model, data, coupling, p, eps, calls, seed):
    """(trace of one chain's covariance x sweeps, the sweeps, s per call, mean tau)."""
    e = ebm.Estimator(model, "ucd", k=1, marginalize="even", **options(coupling, p, eps, data))
    rng = ebm.Generator(seed, 0)
    batch = data[np.arange(ROWS) % len(data)]
    g = np.empty((calls, model.param_count), np.float64)
    taus, t0 = [], time.perf_counter()
    for c in range(calls):
        g[c] = e.gradient(batch, rng)
        taus.append(e.stats["tau_mean"])
    sec = (time.perf_counter() - t0) / calls
    var = ((g - g.mean(axis=0)) ** 2).sum() / (calls - 1) * ROWS
    sweeps = 2.0 * np.mean(taus) - 1.0
    return var * sweeps, sweeps, sec, np.mean(taus)


def main(argv):
    model = ebm.load(argv[0])
    pairs = int(argv[1]) if len(argv) > 1 else 20000
    calls = int(argv[2]) if len(argv) > 2 else 300
    chosen = argv[3].split(",") if len(argv) > 3 else None
    data = bas_rows()
    print("%s: %d pairs for tau, %d UCD calls of %d rows for the inefficiency" %
          (argv[0], pairs, calls, ROWS))
    print("%-12s %7s %4s %5s %6s %7s %6s %6s | %10s %7s %9s %8s %9s" %
          ("setting", "mean", "med", "p99", "p99.9", "max", "acc", "both",
           "ineff.", "sweeps", "ratio", "s/call", "var x s"))
    base = None
    for name, coupling, p, eps in settings():
        if chosen is not None and name not in chosen:
            continue
        tau, acc, both = tau_law(model, data, coupling, p, eps, pairs, 1)
        if calls > 1:
            ineff, sweeps, sec, _ = inefficiency(model, data, coupling, p, eps, calls, 7)
        else:
            ineff = sweeps = sec = float("nan")
        if name == "crn":
            base = ineff
        q = np.percentile(tau, [50, 99, 99.9])
        print("%-12s %7.2f %4.0f %5.0f %6.0f %7d %6.3f %6.3f | %10.4g %7.2f %9.3g %8.4f %9.4g" %
              (name, tau.mean(), q[0], q[1], q[2], tau.max(), acc, both, ineff, sweeps,
               ineff / base if base else float("nan"), sec, ineff / sweeps / ROWS * sec))
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
