"""The log-likelihood of ebm.sklearn's machines: log Z (exact or AIS, cached),
log p(v) (exact, or the mean-field bound of a DBM), with a progress line."""
import sys
import threading
import time

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._abi import Units
from ._generator import Generator
from ._sklearn_data import _STREAM_AIS, _chunks

# score_samples uses exact enumeration when it is cheap (see
# BoltzmannMachine.score_samples): log Z enumerates 2^EXACT_LOG_Z_MAX_BITS
# states at most (the library allows 2^32, hours of work) and sums out
# EXACT_LOG_Z_MAX_WORK units at most over all of them (2^bits times the
# units of the other class; 2^26 is about 2 s: a 20-256 RBM, 2^28, takes
# 9 s exactly, 3 s by AIS), and a DBM's log p(v) enumerates at most
# 2^EXACT_ROW_MAX_BITS hidden states per row (the library allows 2^24).
# Past any of these, log Z comes from AIS.
EXACT_LOG_Z_MAX_BITS = 20
EXACT_LOG_Z_MAX_WORK = 1 << 26
EXACT_ROW_MAX_BITS = 16
# AIS settings: independent runs and inverse temperatures.
AIS_CHAINS = 100
AIS_BETAS = 10000
# log Z that takes longer than this (seconds) says so on stderr.
PROGRESS_AFTER = 1.0


class _LikelihoodMixin:
    """log_likelihood, score_samples and score of BoltzmannMachine (it needs
    model_, _seed, _log_z, _config, _validate and _visible_rows)."""

    @staticmethod
    def _enumeration_bits(model):
        """(bits of exact log Z, bits per row of exact log p(v)), as the library enumerates."""
        s = model.sizes
        even, odd = sum(s[0::2]), sum(s[1::2])
        logz = odd if model.units[0] == Units.GAUSSIAN else min(even, odd)
        row = 0 if len(s) == 2 else min(sum(s[2::2]), odd)
        return logz, row

    @classmethod
    def _score_method(cls, model):
        logz, row = cls._enumeration_bits(model)
        exact = (logz <= EXACT_LOG_Z_MAX_BITS and row <= EXACT_ROW_MAX_BITS
                 and (1 << logz) * (model.state_width - logz) <= EXACT_LOG_Z_MAX_WORK)
        return "exact" if exact else "ais"

    @property
    def score_method_(self):
        """ "exact" or "ais": how score_samples computes log Z (see there)."""
        check_is_fitted(self)
        return self._score_method(self.model_)

    def _partition(self):
        """(log Z, its standard error), computed once per fitted model; a line on
        stderr says so when it takes longer than PROGRESS_AFTER seconds."""
        if self._log_z is None:
            m, method = self.model_, self._score_method(self.model_)
            what = ("exact enumeration" if method == "exact" else
                    "AIS, %d runs x %d temperatures" % (AIS_CHAINS, AIS_BETAS))
            t0, said = time.time(), []

            def say():
                said.append(True)
                print("[%s] computing log Z of a %s model (%s; once per fit)..." %
                      (type(self).__name__, "-".join(map(str, m.sizes)), what),
                      file=sys.stderr, flush=True)

            timer = threading.Timer(PROGRESS_AFTER, say)
            timer.daemon = True
            timer.start()
            try:
                if method == "exact":
                    log_z = (m.log_partition("exact"), 0.0)
                else:
                    log_z = m.log_partition("ais", Generator(self._seed, _STREAM_AIS),
                                            chains=AIS_CHAINS, betas=AIS_BETAS,
                                            return_std=True)
            finally:
                timer.cancel()
                timer.join()
            if said:
                print("[%s] log Z = %.4f (%.1fs)" % (type(self).__name__, log_z[0],
                                                    time.time() - t0),
                      file=sys.stderr, flush=True)
            self._log_z = log_z
        return self._log_z

    @property
    def log_partition_(self):
        """log Z of the fitted model (exact or AIS, per score_method_), cached."""
        check_is_fitted(self)
        return self._partition()[0]

    @property
    def log_partition_std_(self):
        """The AIS standard error of log_partition_; 0.0 when exact."""
        check_is_fitted(self)
        return self._partition()[1]

    def _log_likelihood(self, V):
        m = self.model_
        log_z = self._partition()[0]
        if self._score_method(m) == "exact" or m.n_layers == 2:
            return m.log_likelihood(V, log_z)
        return m.log_likelihood_bound(V, log_z)

    def log_likelihood(self, X):
        """log p(x) of each row of X (after binarize): exact, or with log Z by AIS.

        The estimate score_samples returns for this class; see there.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,), float64
        """
        check_is_fitted(self)
        return self._log_likelihood_of(self._validate(X, reset=False), self._config())

    def _log_likelihood_of(self, X, c):
        out = np.empty(X.shape[0])
        for a, R in _chunks(X):
            out[a:a + R.shape[0]] = self._log_likelihood(self._likely_rows(R, c, a))
        return out

    def _likely_rows(self, R, c, first=0):
        """Dense rows R (row first of X) as the visible states log_likelihood scores."""
        return self._visible_rows(R, c, first=first)

    def score_samples(self, X):
        """log p(x) of each row of X (after binarize): log_likelihood(X).

        score_method_ == "exact" when log Z enumerates at most
        2^EXACT_LOG_Z_MAX_BITS states (the parity class of layers with fewer
        units; a Gaussian layer is always integrated out), summing out at most
        EXACT_LOG_Z_MAX_WORK units in all (2^bits times the units of the
        other class), and, for a DBM, log p(v) enumerates at most
        2^EXACT_ROW_MAX_BITS hidden states per row: then the result is
        exact (these module constants keep it to about 2 s). Otherwise
        ("ais") log Z is estimated by annealed importance sampling
        (AIS_CHAINS runs, AIS_BETAS temperatures, drawn from random_state;
        about 9 s for a 64-256 RBM), and log p(v) is exact given log Z for an
        RBM or GRBM (the free energy is closed-form) and the mean-field lower
        bound for a DBM. log Z is computed once per fitted model
        (log_partition_), on first use.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,), float64
        """
        return self.log_likelihood(X)

    def score(self, X, y=None):
        """The mean of score_samples(X): the average log-likelihood."""
        return float(np.mean(self.score_samples(X)))
