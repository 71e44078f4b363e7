"""BernoulliRBM: a drop-in replacement of sklearn.neural_network.BernoulliRBM.

Part of ebm.sklearn: import it from there (this module builds on that one).
What scikit-learn's API defines is kept: its parameters, attributes, sparse
input, grey values as the visible units' probabilities, gibbs's bool
output, score_samples as the pseudo-likelihood and the verbose lines.
Training runs in libebm (PCD by default, as scikit-learn's "stochastic
maximum likelihood").
"""
import numpy as np
from scipy.special import expit
from sklearn.utils.validation import check_is_fitted

from . import sklearn as _sk
from ._generator import Generator
from ._sklearn_data import _STREAM_SCORE, _check_probabilities, _chunks, _is_int


def _softplus_sum(a):
    """sum_j log(1 + exp(a_ij)) per row, in float64."""
    return np.logaddexp(0, a).sum(axis=1)


class BernoulliRBM(_sk.BoltzmannMachine):
    """A binary RBM with the parameters and behaviour of sklearn.neural_network.BernoulliRBM.

    A drop-in replacement trained by libebm: BoltzmannMachine(
    hidden=(n_components,), units="binary", init="gaussian",
    init_scale=0.01) (scikit-learn's N(0, 0.01^2) weights, zero biases),
    with the same learning_rate, batch_size, n_iter, verbose and
    random_state, and scikit-learn's semantics:

    - X may be dense or sparse (scipy.sparse; densified a batch at a time);
    - values in [0, 1] are the visible units' probabilities: transform and
      score_samples read them as they are (as scikit-learn does), and a
      training minibatch draws 0/1 states from them (the gradient's data
      term is linear in v, so the draw is unbiased); values outside [0, 1]
      raise ValueError (scikit-learn computes with them silently);
    - transform is P(h = 1 | v) = sigmoid(v W^T + c);
    - score_samples is scikit-learn's pseudo-likelihood: n_features times
      log sigmoid(F(v~) - F(v)), v~ being v with one random feature per row
      flipped (v_j -> 1 - v_j); the flipped features come from random_state
      (the same for the same fitted model). The log-likelihood itself is
      log_likelihood(X) (exact, or with log Z by AIS, see
      BoltzmannMachine.score_samples), log Z computed once per fit;
    - gibbs returns bool rows, and takes a single row (shape (n_features,))
      as scikit-learn does;
    - verbose prints "[BernoulliRBM] Iteration 1, pseudo-likelihood =
      -25.39, time = 0.06s" after each epoch (the mean pseudo-likelihood of
      the training data), whatever the size.

    Differences that remain: minibatches are shuffled each epoch
    (scikit-learn takes them in order); the draws come from libebm's
    generator, so results for a given random_state differ from
    scikit-learn's; partial_fit runs one epoch of minibatches over X
    (scikit-learn: one update with X as the minibatch); Ctrl-C during fit
    stops after the current update, keeps the model trained so far and
    raises KeyboardInterrupt.

    Parameters
    ----------
    n_components : int, default=256
        Hidden units.
    learning_rate : float, default=0.1
    batch_size : int, default=10
    n_iter : int, default=10
    verbose : int, default=0
    random_state : int, RandomState instance or None, default=None
    estimator : {"pcd", "cd", "ucd", "ucd_lmi"}, default="pcd"
        scikit-learn's BernoulliRBM uses PCD ("stochastic maximum likelihood").
    binarize : float or None, default=None
        None: values are probabilities (above). A number t: values > t
        become 1 and the others 0 (any real input is then accepted).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features_in_)
    intercept_hidden_ : ndarray of shape (n_components,)
    intercept_visible_ : ndarray of shape (n_features_in_,)
    h_samples_ : ndarray of shape (batch_size, n_components)
        The hidden states of the persistent chains (PCD; zeros for the
        other estimators, which keep none).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        When X has string column names (a DataFrame).
    model_, n_iter_, score_method_, log_partition_, log_partition_std_
        As in BoltzmannMachine.

    Notes
    -----
    check_estimator: the checks in SKIPPED_CHECKS["BernoulliRBM"] feed
    values outside [0, 1] with the default binarize=None, which this class
    refuses by design (each is listed there with the reason); the others
    pass.
    """

    _gibbs_dtype = bool

    def __init__(self, n_components=256, *, learning_rate=0.1, batch_size=10, n_iter=10,
                 verbose=0, random_state=None, estimator="pcd", binarize=None):
        self.n_components = n_components
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.verbose = verbose
        self.random_state = random_state
        self.estimator = estimator
        self.binarize = binarize

    def _skipped_checks(self):
        if self.binarize is not None:  # any real input is accepted: every check applies
            return {}
        return super()._skipped_checks()

    def _fitted(self):
        """check_is_fitted, and ValueError if model_ was closed (as the other methods)."""
        check_is_fitted(self)
        self.model_._h()

    def _hidden_param(self):
        return "n_components=%r" % (self.n_components,)

    def _settings(self):
        n = self.n_components
        if not (_is_int(n) and n >= 1):
            raise ValueError("n_components must be an integer >= 1, not %r" % (n,))
        return {"hidden": (int(n),), "units": "binary", "visible": "binary",
                "estimator": self.estimator, "estimator_options": None,
                "learning_rate": self.learning_rate, "batch_size": self.batch_size,
                "n_iter": self.n_iter, "init": "gaussian", "init_scale": _sk._DEFAULT_RMS,
                "binarize": self.binarize, "random_state": self.random_state,
                "verbose": self.verbose, "grey": True}

    # -- scikit-learn's formulas, on dense float64 rows -------------------------

    def _probabilities(self, R, c, first=0):
        """Dense rows R as float64 visible probabilities (binarized if asked)."""
        if c["binarize"] is None:
            _check_probabilities(R, first)
            return np.asarray(R, np.float64)
        return self._visible_rows(R, c).astype(np.float64)

    def _mean_hiddens(self, V):
        return expit(V @ self.components_.T + self.intercept_hidden_)

    def transform(self, X):
        """P(h = 1 | v = X), the hidden units' probabilities (in X's float dtype).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        self._fitted()
        c = self._config()
        X = self._validate(X, reset=False)
        out = np.empty((X.shape[0], self.components_.shape[0]), X.dtype)
        for a, R in _chunks(X):
            out[a:a + R.shape[0]] = self._mean_hiddens(self._probabilities(R, c, a))
        return out

    def score_samples(self, X):
        """The pseudo-likelihood of each row of X, as scikit-learn computes it.

        n_features * log sigmoid(F(v~) - F(v)), F the free energy and v~ the
        row with one feature j drawn at random flipped to 1 - v_j. The
        features flipped come from random_state and are the same on every
        call for a fitted model (scikit-learn: the same for an int
        random_state). It is a noisy proxy of the log-likelihood, cheap at
        any size; log_likelihood(X) is the log-likelihood itself.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,), float64
        """
        self._fitted()
        return self._pseudo_likelihood(self._validate(X, reset=False), self._config())

    def _pseudo_likelihood(self, X, c):
        n, d = X.shape
        W, b, hb = self.components_, self.intercept_visible_, self.intercept_hidden_
        out = np.empty(n)
        for a, R in _chunks(X):
            V = self._probabilities(R, c, a)
            j = self._flipped(V)
            vj = V[np.arange(V.shape[0]), j]
            delta = 1.0 - 2.0 * vj  # v~_j - v_j
            act = V @ W.T + hb
            fe = -(V @ b) - _softplus_sum(act)
            fe_flip = -(V @ b + delta * b[j]) - _softplus_sum(act + delta[:, None] * W[:, j].T)
            out[a:a + V.shape[0]] = -d * np.logaddexp(0, -(fe_flip - fe))
        return out

    def _flipped(self, V):
        """The feature score_samples flips in each row of V: a hash of the row's
        values (to 2^-20) keyed by the fitted model's seed, so that a row gets
        the same one in any batch, order or call (integer arithmetic modulo
        2^64: exact in any summation order)."""
        d = V.shape[1]
        if self._flip_key is None or self._flip_key.shape[0] != d:
            words = Generator(self._seed, _STREAM_SCORE).uniform(2 * d + 1)
            self._flip_key = (words * (1 << 24)).astype(np.int64)
        key = self._flip_key
        q = np.round(V * (1 << 20)).astype(np.int64)
        with np.errstate(over="ignore"):
            h = q @ (key[:d] << 24 | key[d:2 * d] | 1) + key[-1]
            h = (h ^ (h >> 29)) * np.int64(0x5851F42D4C957F2D)
        return ((h >> 33) % d).astype(np.intp)

    def _likely_rows(self, R, c, first=0):
        V = self._visible_rows(R, c, first=first)
        if not np.all((V == 0) | (V == 1)):
            raise ValueError("log_likelihood scores 0/1 rows: a binary RBM gives grey values "
                             "no probability (set binarize=0.5 to threshold them)")
        return V

    def _progress(self, X):
        return "pseudo-likelihood", float(np.mean(self._pseudo_likelihood(X, self._config())))

    def _gibbs_rows(self, V):
        """h ~ P(h | v), then v' ~ P(v | h) (v may hold probabilities): bool rows."""
        self.model_._h()  # ValueError if the model was closed, as elsewhere
        rng = self._sample_rng
        V = V.astype(np.float64)
        ph = self._mean_hiddens(V)
        h = rng.uniform(ph.size).reshape(ph.shape) < ph
        pv = expit(h @ self.components_ + self.intercept_visible_)
        return rng.uniform(pv.size).reshape(pv.shape) < pv
