"""scikit-learn estimators over libebm: RBMs, DBMs and GRBMs as transformers.

    from ebm.sklearn import BernoulliRBM, BoltzmannMachine
    from sklearn.pipeline import make_pipeline
    from sklearn.linear_model import LogisticRegression
    clf = make_pipeline(BernoulliRBM(n_components=100, n_iter=10, random_state=0),
                        LogisticRegression(max_iter=1000)).fit(X, y)

BoltzmannMachine is the general estimator (any layer sizes, unit kinds and
gradient estimator of the library); BernoulliRBM takes exactly the
parameters of sklearn.neural_network.BernoulliRBM (plus estimator and
binarize) and replaces it (its docstring lists the differences). Both pass
scikit-learn's check_estimator, but for the checks in SKIPPED_CHECKS (with
the reason: BernoulliRBM refuses their values outside [0, 1];
BernoulliRBM(binarize=0.5) passes them all).

The modules that import scikit-learn (and scipy) are this one and its
parts: _bernoulli (BernoulliRBM), _likelihood (log Z and log p(v), the
constants EXACT_* and AIS_* re-exported here) and _sklearn_data (seeds,
input rows, Ctrl-C).
"""
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._abi import Units
from ._chains import Estimator, Sampler
from ._generator import Generator
from ._likelihood import (AIS_BETAS, AIS_CHAINS, EXACT_LOG_Z_MAX_BITS,  # noqa: F401
                          EXACT_LOG_Z_MAX_WORK, EXACT_ROW_MAX_BITS, _LikelihoodMixin)
from ._model import MAX_LAYERS, Model
from ._sklearn_data import (_STREAM_FIT, _STREAM_SAMPLE, _check_probabilities,  # noqa: F401
                            _chunks, _Interrupted, _is_int, _is_real, _rows, _seed_from,
                            _StopOnCtrlC, _Uniforms)

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _sk_validate_data
except ImportError:  # pragma: no cover - depends on the installed version
    _sk_validate_data = None

__all__ = ["BoltzmannMachine", "BernoulliRBM", "SKIPPED_CHECKS"]

# Checks of sklearn.utils.estimator_checks.check_estimator that an estimator
# is expected to fail, by class name: {check name: reason}. They are passed
# to scikit-learn as the "_xfail_checks" tag, so parametrize_with_checks
# marks them xfail. Empty: both classes pass every check.
SKIPPED_CHECKS = {
    "BoltzmannMachine": {},
    # BernoulliRBM refuses values outside [0, 1] with its default
    # binarize=None (they are probabilities), and these checks feed such
    # values; BernoulliRBM(binarize=0.5), which takes any real input, passes
    # every check (python/tests/test_sklearn.py runs both).
    "BernoulliRBM": {name: "feeds values outside [0, 1], which BernoulliRBM refuses (ValueError)"
                     " by design; BernoulliRBM(binarize=0.5) passes it" for name in (
        "check_estimators_dtypes", "check_estimators_fit_returns_self",
        "check_pipeline_consistency", "check_estimators_overwrite_params",
        "check_estimators_pickle", "check_transformer_data_not_an_array",
        "check_transformer_general", "check_transformer_preserve_dtypes",
        "check_methods_sample_order_invariance", "check_methods_subset_invariance",
        "check_fit2d_1sample", "check_fit2d_1feature", "check_dict_unchanged",
        "check_dont_overwrite_parameters", "check_fit_idempotent",
        "check_fit_check_is_fitted", "check_n_features_in", "check_fit2d_predict1d")},
}


_ESTIMATORS = ("pcd", "cd", "ucd", "ucd_lmi", "grbm_cd")
_UNITS = ("binary", "spin")
_VISIBLE = ("binary", "spin", "gaussian")
_INITS = ("orthogonal", "gaussian")
_DEFAULT_RMS = 0.01  # root-mean-square weight of the default initialisation
# Mean-field posterior settings of transform: those of the library's
# ebm_model_log_likelihood_bound, so that transform returns the Q of score_samples.
_MF_ITERS = 200
_MF_TOL = 1e-7


class BoltzmannMachine(_LikelihoodMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                       BaseEstimator):
    """A restricted or deep Boltzmann machine, or a Gaussian-Bernoulli RBM (libebm).

    One hidden layer makes an RBM (a GRBM with visible="gaussian"), more a
    DBM. Trained by minibatch stochastic gradient ascent on the
    log-likelihood with one of libebm's gradient estimators.

    Parameters
    ----------
    hidden : tuple of int, default=(256,)
        Hidden layer sizes, bottom first. One entry: an RBM; more: a DBM.
    units : {"binary", "spin"}, default="binary"
        Unit kind of every layer (0/1 or -1/+1).
    visible : {None, "binary", "spin", "gaussian"}, default=None
        Visible unit kind; None means `units`. "gaussian" makes a GRBM
        (Liao et al. 2022) with learned means and variances.
    estimator : {"pcd", "cd", "ucd", "ucd_lmi", "grbm_cd"}, default="pcd"
        Gradient estimator (ebm.Estimator): persistent or plain contrastive
        divergence, unbiased CD by coupled chains (Qiu et al. 2020), UCD with
        local-mode initialisation (Taniguchi et al. 2023; binary or spin
        layers only), or the modified CD of Liao et al. (GRBMs only). PCD
        keeps `batch_size` persistent chains unless estimator_options sets
        "chains".
    estimator_options : dict or None, default=None
        Keyword options of ebm.Estimator, e.g. {"k": 1} or
        {"marginalize": "odd"}; None keeps the library's defaults.
    learning_rate : float, default=0.1
        Step size: theta += learning_rate * (minibatch-mean gradient).
    batch_size : int, default=10
        Rows per minibatch.
    n_iter : int, default=10
        Epochs (passes over the training data) of fit.
    init : {"orthogonal", "gaussian"}, default="orthogonal"
        Weight initialisation (ebm.Model.init): Haar-random semi-orthogonal
        W_l times a scale, or i.i.d. N(0, scale^2) entries. Biases follow the
        library (binary 0; spin Logistic(0, 0.5); Gaussian mean 0, variance 1).
    init_scale : float or None, default=None
        The `scale` of ebm.Model.init. None gives every W_l a root-mean-square
        entry of 0.01, as scikit-learn's BernoulliRBM (N(0, 0.01^2)): scale
        0.01 for "gaussian"; for "orthogonal", W_l is the orthogonal matrix
        times 0.01 * sqrt(max(n_{l-1}, n_l)) (its singular values are then all
        equal to the typical one of the Gaussian matrix).
    binarize : float or None, default=0.5
        Threshold applied to the input of binary and spin visible units:
        values > binarize become 1 (binary) or +1 (spin), the others 0 or -1.
        None passes the data as it is: it must then hold only 0/1 (or -1/+1),
        and the library's ValueError (naming the row, unit and value) is
        raised otherwise. Ignored for Gaussian visible units.
    random_state : int, RandomState instance or None, default=None
        Seeds every draw (initialisation, shuffles, gradients, sampling and
        AIS) through ebm.Generator: an int is the seed itself, a RandomState
        gives a seed drawn from it, None a seed drawn from np.random. Fits
        with the same int are identical.
    verbose : int, default=0
        Print one line per epoch, whatever the size: "[BoltzmannMachine]
        Iteration 1, log-likelihood = -25.39, time = 0.06s", the mean exact
        log-likelihood when it is cheap (score_method_ == "exact"; the line
        has only the time otherwise).

    X may be dense or a scipy.sparse matrix (densified 1024 rows at
    a time) in every method. Ctrl-C (SIGINT) during fit or partial_fit stops
    after the current minibatch update: the machine keeps the updates made
    so far (fitted, usable, n_iter_ counting the epoch interrupted) and
    KeyboardInterrupt is raised.

    Attributes
    ----------
    model_ : ebm.Model
        The trained machine (layers: n_features_in_, *hidden).
    components_ : ndarray of shape (hidden[0], n_features_in_)
        W_1 transposed (float64), as in scikit-learn's BernoulliRBM.
    intercept_hidden_ : ndarray of shape (hidden[0],)
        Biases of the first hidden layer.
    intercept_visible_ : ndarray of shape (n_features_in_,)
        Visible biases (for Gaussian visible units: their means mu).
    h_samples_ : ndarray of shape (chains, hidden[0])
        The first hidden layer of the persistent chains (PCD: batch_size of
        them), float64; zeros of shape (batch_size, hidden[0]) for the
        estimators that keep no chains.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X had string column names (a DataFrame).
    n_iter_ : int
        Epochs trained: n_iter after fit, plus one per partial_fit.
    score_method_ : {"exact", "ais"}
        How score_samples computes log Z (see there).
    log_partition_ : float
        log Z of the fitted model, computed on first use and kept until the
        next fit or partial_fit.
    log_partition_std_ : float
        The AIS standard error of log_partition_ (0.0 when exact).

    Notes
    -----
    check_estimator: every check passes (SKIPPED_CHECKS["BoltzmannMachine"]
    is empty).
    """

    def __init__(self, hidden=(256,), *, units="binary", visible=None, estimator="pcd",
                 estimator_options=None, learning_rate=0.1, batch_size=10, n_iter=10,
                 init="orthogonal", init_scale=None, binarize=0.5, random_state=None,
                 verbose=0):
        self.hidden = hidden
        self.units = units
        self.visible = visible
        self.estimator = estimator
        self.estimator_options = estimator_options
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.init = init
        self.init_scale = init_scale
        self.binarize = binarize
        self.random_state = random_state
        self.verbose = verbose

    # -- configuration --------------------------------------------------------

    def _settings(self):
        """The settings of the machinery, by the names of BoltzmannMachine's parameters."""
        return {name: getattr(self, name) for name in (
            "hidden", "units", "visible", "estimator", "estimator_options", "learning_rate",
            "batch_size", "n_iter", "init", "init_scale", "binarize", "random_state",
            "verbose")}

    def _config(self):
        """_settings(), validated and normalised; ValueError names a bad parameter."""
        c = dict(self._settings())
        hidden = c["hidden"]
        if _is_int(hidden):
            hidden = (hidden,)
        try:
            hidden = tuple(hidden)
        except TypeError:
            raise ValueError("hidden must be a tuple of layer sizes, not %r" % (hidden,)) from None
        if not hidden or not all(_is_int(h) and h >= 1 for h in hidden):
            raise ValueError("hidden must be a non-empty tuple of positive integers, not %r" %
                             (c["hidden"],))
        if len(hidden) + 1 > MAX_LAYERS:
            raise ValueError("hidden: at most %d hidden layers, not %d" %
                             (MAX_LAYERS - 1, len(hidden)))
        c["hidden"] = tuple(int(h) for h in hidden)
        if c["units"] not in _UNITS:
            raise ValueError("units must be one of %s, not %r" % (_UNITS, c["units"]))
        if c["visible"] is None:
            c["visible"] = c["units"]
        if c["visible"] not in _VISIBLE:
            raise ValueError("visible must be None or one of %s, not %r" %
                             (_VISIBLE, c["visible"]))
        if c["estimator"] not in _ESTIMATORS:
            raise ValueError("estimator must be one of %s, not %r" %
                             (_ESTIMATORS, c["estimator"]))
        gaussian = c["visible"] == "gaussian"
        if c["estimator"] == "grbm_cd" and not (gaussian and len(c["hidden"]) == 1):
            raise ValueError("estimator='grbm_cd' trains GRBMs only: it needs "
                             "visible='gaussian' and one hidden layer, not visible=%r and "
                             "hidden=%r" % (c["visible"], c["hidden"]))
        if c["estimator"] == "ucd_lmi" and gaussian:
            raise ValueError("estimator='ucd_lmi' needs binary or spin visible units, not "
                             "visible='gaussian'")
        opts = c["estimator_options"]
        if opts is None:
            opts = {}
        if not isinstance(opts, dict):
            raise ValueError("estimator_options must be a dict or None, not %r" % (opts,))
        c["estimator_options"] = dict(opts)
        if not (_is_real(c["learning_rate"]) and np.isfinite(c["learning_rate"])
                and c["learning_rate"] > 0):
            raise ValueError("learning_rate must be a finite number > 0, not %r" %
                             (c["learning_rate"],))
        if not (_is_int(c["batch_size"]) and c["batch_size"] >= 1):
            raise ValueError("batch_size must be an integer >= 1, not %r" % (c["batch_size"],))
        if not (_is_int(c["n_iter"]) and c["n_iter"] >= 0):
            raise ValueError("n_iter must be an integer >= 0, not %r" % (c["n_iter"],))
        if c["init"] not in _INITS:
            raise ValueError("init must be one of %s, not %r" % (_INITS, c["init"]))
        s = c["init_scale"]
        if s is not None and not (_is_real(s) and np.isfinite(s) and s > 0):
            raise ValueError("init_scale must be None or a finite number > 0, not %r" % (s,))
        b = c["binarize"]
        if b is not None and not (_is_real(b) and np.isfinite(b)):
            raise ValueError("binarize must be None or a finite number, not %r" % (b,))
        c["grey"] = bool(c.get("grey", False))
        return c

    def _hidden_param(self):
        """The hyperparameter that sets the hidden layers, as name=value."""
        return "hidden=%r" % (self.hidden,)

    # -- data -------------------------------------------------------------------

    def _validate(self, X, reset):
        kw = dict(dtype=(np.float64, np.float32), reset=reset, accept_sparse="csr")
        if _sk_validate_data is not None:  # pragma: no cover
            return _sk_validate_data(self, X, **kw)
        return self._validate_data(X, **kw)

    def _visible_rows(self, X, c, draw=None, first=0):
        """Dense validated rows X as float32 visible values: binarized for binary
        and spin units when binarize is set. With c["grey"] (BernoulliRBM's
        binarize=None) values in [0, 1] are probabilities: checked and
        returned as they are, or, given draw (the training generator's
        _Uniforms; _check_input checked the rows before training), drawn as
        0/1 states (rows that hold only 0 and 1 are their own draw)."""
        visible, binarize = c["visible"], c["binarize"]
        if visible != "gaussian" and binarize is not None:
            low = 0.0 if visible == "binary" else -1.0
            return np.where(X > binarize, np.float32(1.0), np.float32(low))
        V = np.ascontiguousarray(X, dtype=np.float32)
        if not c["grey"] or visible == "gaussian":
            return V
        if draw is None:
            _check_probabilities(X, first)
            return V
        if np.all((V == 0) | (V == 1)):
            return V
        return (draw(V.size).reshape(V.shape) < V).astype(np.float32)

    # -- fitting ----------------------------------------------------------------

    def _new_model(self, c, n_features, rng):
        sizes = (n_features,) + c["hidden"]
        try:
            model = Model(sizes, visible=c["visible"], hidden=c["units"])
        except ValueError as e:  # the library names sizes[l]: this estimator's hidden[l - 1]
            raise ValueError("%s: %s" % (self._hidden_param(), e)) from e
        if c["init_scale"] is not None:
            model.init(rng, c["init"], float(c["init_scale"]))
        elif c["init"] == "gaussian":
            model.init(rng, "gaussian", _DEFAULT_RMS)
        else:  # orthogonal, rescaled per layer to an RMS entry of 0.01
            model.init(rng, "orthogonal", 1.0)
            p = model.params()
            for l in range(1, len(sizes)):
                off, rows, cols = model.param_block("weight", l)
                p[off:off + rows * cols] *= _DEFAULT_RMS * np.sqrt(max(rows, cols))
            model.set_params(p)
        return model

    def _new_estimator(self, c, model):
        opts = dict(c["estimator_options"])
        if c["estimator"] in ("pcd", "grbm_cd"):
            opts.setdefault("chains", c["batch_size"])
        return Estimator(model, c["estimator"], **opts)

    def _start(self, c, n_features):
        """(model, estimator, seed, fit generator) for a new fit."""
        seed = _seed_from(c["random_state"])
        rng = Generator(seed, _STREAM_FIT)
        model = self._new_model(c, n_features, rng)
        return model, self._new_estimator(c, model), seed, rng

    @staticmethod
    def _check_rows(model, V):
        """The library's ValueError for invalid visible values, naming X's row (not a batch's)."""
        x = np.ones((V.shape[0], model.state_width), np.float32)  # 1: valid hidden values
        x[:, :model.n_visible] = V
        model.layer_input(x, 1)

    def _check_input(self, c, model, X):
        """Refuses X before any training: values the visible units cannot take."""
        for a, R in _chunks(X):
            V = self._visible_rows(R, c, first=a)
            if c["binarize"] is None and not c["grey"]:
                self._check_rows(model, V)

    def _epoch(self, c, model, est, rng, X, stop):
        """One shuffled pass of minibatches; False if stop asked to stop (after an update)."""
        n, bs = X.shape[0], c["batch_size"]
        order = np.argsort(rng.uniform(n), kind="stable")
        lr = float(c["learning_rate"])
        draw = _Uniforms(rng)
        for i in range(0, n, bs):
            V = self._visible_rows(_rows(X, order[i:i + bs]), c, draw)
            grad = est.gradient(V, rng)
            model.axpy_params(lr, grad)
            if stop.requested:
                return False
        return True

    def _finish(self, model, est, seed, rng, n_iter, new):
        """Store the fitted state: everything at once, after training succeeded."""
        self.model_ = model
        self._ebm_estimator = est
        self._seed = seed
        self._rng = rng
        if new:
            self._sample_rng = Generator(seed, _STREAM_SAMPLE)
        self._log_z = None
        self._flip_key = None
        self.n_iter_ = n_iter
        self._n_features_out = model.sizes[1]
        self._update_attributes()

    def _update_attributes(self):
        m, est = self.model_, self._ebm_estimator
        self.components_ = m.weight(1).T.astype(np.float64)
        self.intercept_hidden_ = m.bias(1).astype(np.float64)
        self.intercept_visible_ = m.bias(0).astype(np.float64)
        a, b = m.offsets[1], m.offsets[1] + m.sizes[1]
        if est.num_chains:  # the persistent chains' first hidden layer
            self.h_samples_ = est.chains[:, a:b].astype(np.float64)
        else:
            self.h_samples_ = np.zeros((self._config()["batch_size"], m.sizes[1]))

    def _progress(self, X):
        """(name, value) of the per-epoch line of verbose, or None: the mean
        log-likelihood when it is exact and cheap."""
        if self._score_method(self.model_) != "exact":
            return None
        return "log-likelihood", float(np.mean(self._log_likelihood_of(X, self._config())))

    def _report(self, epoch, X, elapsed):
        score = self._progress(X)
        if score is None:
            print("[%s] Iteration %d, time = %.2fs" % (type(self).__name__, epoch, elapsed))
        else:
            print("[%s] Iteration %d, %s = %.2f, time = %.2fs" %
                  (type(self).__name__, epoch, score[0], score[1], elapsed))
        sys.stdout.flush()

    def _interrupted(self, model, est, seed, rng, epoch, new, X):
        """Keep the model trained so far, say so, and raise _Interrupted."""
        self._finish(model, est, seed, rng, epoch, new)
        print("[%s] Interrupted in iteration %d: the model keeps the updates made so far "
              "(n_iter_ = %d)" % (type(self).__name__, epoch, epoch), file=sys.stderr)
        raise _Interrupted("fit interrupted in iteration %d; the model is usable" % epoch)

    def fit(self, X, y=None):
        """Train a new machine on X for n_iter epochs of shuffled minibatches.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        return self._restoring(self._fit, X)

    def _restoring(self, method, X):
        """method(X), with the estimator's attributes as they were if it raises.

        (The model itself is only restored by fit: partial_fit on a fitted
        machine may have applied some minibatches before a failure.)
        """
        saved = dict(self.__dict__)
        try:
            return method(X)
        except _Interrupted:
            raise  # the model trained so far is kept
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    def _fit(self, X):
        c = self._config()
        X = self._validate(X, reset=True)
        model, est, seed, rng = self._start(c, X.shape[1])
        self._check_input(c, model, X)
        with _StopOnCtrlC() as stop:
            for epoch in range(1, c["n_iter"] + 1):
                t0 = time.time()
                try:
                    done = self._epoch(c, model, est, rng, X, stop)
                except KeyboardInterrupt:  # raised in Python code: the last update is whole
                    done = False
                if not done:
                    self._interrupted(model, est, seed, rng, epoch, True, X)
                if c["verbose"]:
                    self._finish(model, est, seed, rng, epoch, new=True)
                    self._report(epoch, X, time.time() - t0)
        self._finish(model, est, seed, rng, c["n_iter"], new=True)
        return self

    def partial_fit(self, X, y=None):
        """One epoch of minibatches over X; the first call creates the machine.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        return self._restoring(self._partial_fit, X)

    def _partial_fit(self, X):
        c = self._config()
        first = not hasattr(self, "model_")
        X = self._validate(X, reset=first)
        t0 = time.time()
        if first:
            model, est, seed, rng = self._start(c, X.shape[1])
            n_iter = 0
        else:
            model, est, seed, rng = self.model_, self._ebm_estimator, self._seed, self._rng
            n_iter = self.n_iter_
        self._check_input(c, model, X)
        with _StopOnCtrlC() as stop:
            try:
                done = self._epoch(c, model, est, rng, X, stop)
            except KeyboardInterrupt:
                done = False
        if not done:
            self._interrupted(model, est, seed, rng, n_iter + 1, first, X)
        self._finish(model, est, seed, rng, n_iter + 1, new=first)
        if c["verbose"]:
            self._report(self.n_iter_, X, time.time() - t0)
        return self

    # -- representation -----------------------------------------------------------

    def _posterior_means(self, V):
        """Full states: V, then the means of the hidden layers given V (mean field for a DBM)."""
        m = self.model_
        mu = np.zeros((V.shape[0], m.state_width), np.float32)
        if m.n_layers == 2:
            mu[:, :m.n_visible] = V
            mu[:, m.n_visible:] = m.layer_mean(V, 1)
            return mu
        for l in range(1, m.n_layers):  # start: every hidden unit at its mean under no input
            if m.units[l] == Units.BINARY:
                mu[:, m.offsets[l]:m.offsets[l] + m.sizes[l]] = 0.5
        mu[:, :m.n_visible] = V
        clamp = np.zeros(m.state_width, bool)
        clamp[:m.n_visible] = True
        mu, _ = m.mean_field(mu, clamp, max_iter=_MF_ITERS, tol=_MF_TOL)
        return mu

    def transform(self, X):
        """The means of the first hidden layer given X.

        For an RBM or GRBM, E[h_1 | v = X] (sigmoid or tanh of the layer
        input). For a DBM, the exact posterior of h_1 is not factorial: this
        returns the means of h_1 under the mean-field posterior Q(h | v)
        (Salakhutdinov and Larochelle 2010), the fixed point of
        ebm.Model.mean_field with the visible layer clamped to X, started from
        hidden means 0.5 (binary) or 0 (spin), 200 iterations at most,
        tolerance 1e-7 (the settings of the library's log-likelihood bound).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, hidden[0]), of X's float dtype
        """
        check_is_fitted(self)
        c = self._config()
        X = self._validate(X, reset=False)
        m = self.model_
        out = np.empty((X.shape[0], m.sizes[1]), X.dtype)
        for a, R in _chunks(X):
            mu = self._posterior_means(self._visible_rows(R, c, first=a))
            out[a:a + R.shape[0]] = mu[:, m.offsets[1]:m.offsets[1] + m.sizes[1]]
        return out

    # -- sampling ---------------------------------------------------------------

    def _sweep(self, x, rng):
        """One Gibbs sweep of full states x: odd layers given the even, then even given odd."""
        m = self.model_
        for parity in (1, 0):
            for l in range(parity, m.n_layers, 2):
                x = m.layer_sample(x, l, rng)
        return x

    def gibbs(self, v):
        """One Gibbs sweep from visible rows v: the new visible samples.

        For an RBM or GRBM: h ~ p(h | v), then v' ~ p(v | h), as
        scikit-learn's BernoulliRBM.gibbs. For a DBM the even hidden layers
        are first drawn from the mean-field posterior Q(h | v) (see
        transform), then the odd layers are drawn given the even ones and the
        even layers (v among them) given the odd ones. Draws come from a
        generator seeded by random_state that moves with each call.

        Parameters
        ----------
        v : {array-like, sparse matrix} of shape (n_samples, n_features), or one
            row of shape (n_features,)

        Returns
        -------
        ndarray of v's shape, float64 (bool for BernoulliRBM)
        """
        check_is_fitted(self)
        c = self._config()
        one = not sp.issparse(v) and np.ndim(v) == 1
        v = self._validate(np.reshape(v, (1, -1)) if one else v, reset=False)
        out = np.empty(v.shape, self._gibbs_dtype)
        for a, R in _chunks(v):
            out[a:a + R.shape[0]] = self._gibbs_rows(self._visible_rows(R, c, first=a))
        return out[0] if one else out

    _gibbs_dtype = np.float64

    def _gibbs_rows(self, V):
        """One Gibbs sweep (see gibbs) from the float32 visible rows V."""
        m, rng = self.model_, self._sample_rng
        x = np.zeros((V.shape[0], m.state_width), np.float32)
        x[:, :m.n_visible] = V
        if m.n_layers > 2:
            mu = self._posterior_means(V)
            for l in range(2, m.n_layers, 2):
                a, b = m.offsets[l], m.offsets[l] + m.sizes[l]
                u = rng.uniform(V.shape[0] * m.sizes[l]).reshape(V.shape[0], m.sizes[l])
                if m.units[l] == Units.BINARY:
                    x[:, a:b] = u < mu[:, a:b]
                else:
                    x[:, a:b] = np.where(u < (1 + mu[:, a:b]) / 2, 1.0, -1.0)
        x = self._sweep(x, rng)
        return x[:, :m.n_visible]

    def sample(self, n_samples, n_steps=1000):
        """n_samples visible rows from the model: n_steps Gibbs sweeps from random states.

        The chains start from independent uniform states (N(0, 1) for Gaussian
        visible units) and are n_samples independent chains; draws come from
        the generator of gibbs.

        Returns
        -------
        ndarray of shape (n_samples, n_features_in_), float64
        """
        check_is_fitted(self)
        if not (_is_int(n_samples) and n_samples >= 0):
            raise ValueError("n_samples must be an integer >= 0, not %r" % (n_samples,))
        if not (_is_int(n_steps) and n_steps >= 0):
            raise ValueError("n_steps must be an integer >= 0, not %r" % (n_steps,))
        m, rng = self.model_, self._sample_rng
        x = m.random_state(rng, int(n_samples))
        sampler = Sampler(m, "gibbs")
        for _ in range(int(n_steps)):
            sampler.step(x, rng)
        return x[:, :m.n_visible].astype(np.float64)

    # -- scikit-learn ---------------------------------------------------------

    def _skipped_checks(self):
        """The checks this instance is expected to fail: {name: reason}."""
        return SKIPPED_CHECKS.get(type(self).__name__)

    def _more_tags(self):
        tags = {"preserves_dtype": [np.float64, np.float32]}
        xfail = self._skipped_checks()
        if xfail:
            tags["_xfail_checks"] = dict(xfail)
        return tags


from ._bernoulli import BernoulliRBM  # noqa: E402  (it builds on BoltzmannMachine)
