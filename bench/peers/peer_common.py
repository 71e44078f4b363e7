"""Shared helpers of the peer drivers (bench/peers/*.py).

Import this module before numpy or torch: it sets the thread variables from
BENCH_THREADS (default 2) so that OpenBLAS and OpenMP start with that many
threads. Each driver prints one human line and one JSON line, as the
programs of bench/*.c do.
"""
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import time

THREADS = int(os.environ.get("BENCH_THREADS", "2"))
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(THREADS)

import numpy as np  # noqa: E402  (after the thread variables)

FASHION_DIR = os.environ.get("DATA_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")


def fashion_mnist(n):
    """The first n training images of Fashion-MNIST as bytes 0..255 (uint8,
    n x 784; grey = byte / 255, so grey >= 0.5 is byte >= 128), or None if
    the data set is not installed. Only these rows are read."""
    path = os.path.join(FASHION_DIR, "train-images-idx3-ubyte.gz")
    if not os.path.exists(path):
        return None
    with gzip.open(path, "rb") as f:
        head = np.frombuffer(f.read(16), dtype=">i4")
        assert head[0] == 2051 and head[2] * head[3] == 784, path
        raw = np.frombuffer(f.read(n * 784), dtype=np.uint8)
    return raw.reshape(n, 784)


def peer_checkout(var, name):
    """The checkout named by the environment variable var (default
    bench/peers/src/<name>) and its commit; prints a skipped line and exits 0 if it is missing."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.environ.get(var) or os.path.join(here, "src", name)
    if not os.path.isdir(path):
        print(f"{name}: skipped: no checkout at {path} (set {var} or run bench/peers/fetch.sh)")
        sys.exit(0)
    try:
        commit = subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return path, commit


def time_steps(step, warmup, reps):
    """Run step(i) warmup times, then reps times timed: the median wall
    time in ms, and the JSON fields that describe the timing (the counts,
    the fastest step and, for runs of at most 20 steps, every step)."""
    for i in range(warmup):
        step(i)
    times = []
    for i in range(reps):
        t0 = time.perf_counter()
        step(warmup + i)
        times.append(1e3 * (time.perf_counter() - t0))
    fields = {"warmup": warmup, "reps": reps, "min_ms": round(min(times), 4)}
    if reps <= 20:
        fields["times_ms"] = [round(t, 1) for t in times]
    return statistics.median(times), fields


def blas_info():
    """The BLAS numpy (and sklearn) run, with its thread count, via
    threadpoolctl where installed."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown"
    libs = [f"{i.get('internal_api')} {i.get('version')} x{i.get('num_threads')}"
            for i in threadpool_info() if i.get("user_api") == "blas"]
    return ", ".join(libs) or "none"


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def report(bench, peer, ms, what, extra):
    """The human line and the JSON line. extra: more JSON fields (dict)."""
    rss = peak_rss_mib()
    notes = ", ".join(f"{k} {str(v)[:12] if k == 'commit' else v}" for k, v in extra.items()
                      if k != "times_ms")
    print(f"{bench:<20} {peer}  threads {THREADS:<7} {ms:10.3f} ms/step  RSS {rss:.0f} MiB"
          f"  | {what}; {notes}")
    line = {"bench": bench, "peer": peer, "threads": THREADS, "ms_per_step": round(ms, 4),
            "peak_rss_mib": round(rss, 1)}
    line.update(extra)
    print(json.dumps(line))
    sys.stdout.flush()
