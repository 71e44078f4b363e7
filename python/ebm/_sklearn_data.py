"""Helpers of ebm.sklearn: seeds, input rows (dense or sparse), Ctrl-C during a fit."""
import numbers
import signal
import threading

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

# Generator streams derived from the seed: training (initialisation,
# shuffles, gradients), sampling (gibbs, sample), AIS, the bits that
# BernoulliRBM.score_samples flips.
_STREAM_FIT, _STREAM_SAMPLE, _STREAM_AIS, _STREAM_SCORE = 0, 1, 2, 3
# Rows densified at a time from a sparse input (a dense one is read whole).
SPARSE_BATCH = 1024


def _seed_from(random_state):
    """A 64-bit seed: an int as is; from a RandomState (or np.random for None) else."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        seed = int(random_state)
        if not 0 <= seed < 1 << 64:
            raise ValueError("random_state must be in [0, 2^64) as an integer, not %d" % seed)
        return seed
    rs = check_random_state(random_state)  # None -> np.random's singleton; ValueError else
    hi, lo = (int(v) for v in rs.randint(0, 1 << 32, size=2, dtype=np.uint64))
    return hi << 32 | lo


def _chunks(X):
    """(first row, dense rows) of X: a dense X whole, a sparse one SPARSE_BATCH rows at a time."""
    if not sp.issparse(X):
        yield 0, X
        return
    size = SPARSE_BATCH
    for a in range(0, X.shape[0], size):
        yield a, X[a:a + size].toarray()


def _rows(X, index):
    """X[index] as a dense array (only those rows of a sparse X are densified)."""
    R = X[index]
    return R.toarray() if sp.issparse(R) else R


class _Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a fit, which kept the updates made so far (see _StopOnCtrlC)."""


class _StopOnCtrlC:
    """During a fit in the main thread: SIGINT asks the fit to stop after its
    current minibatch update (.requested) rather than raising inside it. Only
    Python's default handler is replaced, and it is restored on exit."""

    def __init__(self):
        self.requested = False
        self._old = None

    def _handler(self, signum, frame):
        self.requested = True

    def __enter__(self):
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            self._old = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc):
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)


def _check_probabilities(X, first=0):
    """ValueError unless every value of the dense rows X is in [0, 1] (NaN neither);
    the message counts rows from first (X's place in the caller's whole matrix)."""
    if X.size and not (np.min(X) >= 0 and np.max(X) <= 1):
        bad = np.flatnonzero(~((X >= 0) & (X <= 1)))[0]
        row, col = divmod(int(bad), X.shape[1])
        raise ValueError("BernoulliRBM takes values in [0, 1] (probabilities of the visible "
                         "units; binarize=t thresholds other data): row %d, feature %d is %r"
                         % (first + row, col, float(X[row, col])))


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_real(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


class _Uniforms:
    """Uniforms in [0, 1) from an ebm.Generator, drawn BLOCK at a time: one C
    call serves many minibatches (a call per minibatch of 10 rows cost as
    much as its gradient)."""

    BLOCK = 1 << 16

    def __init__(self, rng):
        self._rng, self._buf, self._at = rng, np.empty(0, np.float32), 0

    def __call__(self, k):
        """The next k uniforms (float32)."""
        if self._at + k > self._buf.shape[0]:
            fresh = self._rng.uniform(max(k, self.BLOCK))
            self._buf, self._at = np.concatenate([self._buf[self._at:], fresh]), 0
        u = self._buf[self._at:self._at + k]
        self._at += k
        return u
