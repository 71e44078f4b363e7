"""ebm.sklearn.BernoulliRBM as a drop-in for sklearn.neural_network.BernoulliRBM:
sparse input, grey values, attributes, gibbs, verbose lines, score_samples
(the pseudo-likelihood) against the exact log-likelihood, Ctrl-C during fit."""
import os
import re
import signal
import threading
import time

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
sp = pytest.importorskip("scipy.sparse")

from ebm import _likelihood, _sklearn_data  # noqa: E402
from ebm.sklearn import BernoulliRBM  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.neural_network import BernoulliRBM as SkRBM  # noqa: E402


@pytest.fixture(scope="module")
def digits():
    X = load_digits().data / 16.0  # grey values in [0, 1]
    return X[:400]


@pytest.fixture(scope="module")
def fitted(digits):
    return BernoulliRBM(n_components=16, n_iter=3, random_state=0).fit(digits)


def test_sparse_input_everywhere(digits, fitted, monkeypatch):
    """CSR gives the dense results, densified a batch at a time (never whole)."""
    S = sp.csr_matrix(digits)
    dense_fit = BernoulliRBM(n_components=16, n_iter=3, random_state=0).fit(digits)
    monkeypatch.setattr(_sklearn_data, "SPARSE_BATCH", 64)
    widest = []
    real = sp.csr_matrix.toarray

    def toarray(self, *a, **k):
        widest.append(self.shape[0])
        return real(self, *a, **k)

    monkeypatch.setattr(sp.csr_matrix, "toarray", toarray)
    sparse_fit = BernoulliRBM(n_components=16, n_iter=3, random_state=0).fit(S)
    np.testing.assert_array_equal(sparse_fit.components_, dense_fit.components_)
    np.testing.assert_allclose(fitted.transform(S), fitted.transform(digits), rtol=1e-12)
    np.testing.assert_allclose(fitted.score_samples(S), fitted.score_samples(digits),
                               rtol=1e-12)
    assert fitted.gibbs(S[:5]).shape == (5, 64)
    BernoulliRBM(n_components=4, random_state=0).partial_fit(S).partial_fit(S[:50])
    assert widest and max(widest) <= 64


def test_grey_values_are_probabilities(fitted):
    """transform reads 0.4 as 0.4 (scikit-learn's formula), not as 0."""
    x = np.full((1, 64), 0.4)
    want = 1 / (1 + np.exp(-(x @ fitted.components_.T + fitted.intercept_hidden_)))
    np.testing.assert_allclose(fitted.transform(x), want, rtol=1e-12)
    assert not np.allclose(fitted.transform(x), fitted.transform(np.zeros((1, 64))))


@pytest.mark.parametrize("bad", [-0.1, 1.5, np.nan])
def test_values_outside_unit_interval_refused(digits, fitted, bad):
    X = digits[:20].copy()
    X[3, 5] = bad
    for call in (lambda: BernoulliRBM(n_components=4).fit(X), lambda: fitted.transform(X),
                 lambda: fitted.score_samples(X), lambda: fitted.gibbs(X)):
        with pytest.raises(ValueError, match=r"\[0, 1\]|NaN"):
            call()
    BernoulliRBM(n_components=4, binarize=0.5, n_iter=1).fit(np.nan_to_num(X))  # thresholds



def test_bad_value_named_by_its_row_in_x(fitted):
    """A sparse X is densified a batch at a time; the message names the row of X."""
    n = 2 * _sklearn_data.SPARSE_BATCH + 7
    X = sp.lil_matrix((n, 64))
    X[n - 3, 9] = 2.0
    X = X.tocsr()
    for call in (lambda: BernoulliRBM(n_components=4).fit(X), lambda: fitted.transform(X),
                 lambda: fitted.score_samples(X), lambda: fitted.gibbs(X),
                 lambda: fitted.log_likelihood(X)):
        with pytest.raises(ValueError, match=r"row %d, feature 9 is 2\.0" % (n - 3)):
            call()

def _visible_marginal(rbm):
    """The model's mean P(v_i = 1) over the visible units, by enumeration."""
    import itertools
    V = np.array(list(itertools.product([0, 1], repeat=rbm.n_features_in_)), float)
    fe = -(V @ rbm.intercept_visible_) - np.logaddexp(
        0, V @ rbm.components_.T + rbm.intercept_hidden_).sum(1)
    p = np.exp(-fe - np.max(-fe))
    return float((p / p.sum()) @ V.mean(axis=1))


def test_grey_training_draws_states():
    """Training on probabilities p fits the data drawn from p: on constant grey
    0.3 (8 pixels, 2 hidden units, 20 epochs) the model's P(v_i = 1) is
    0.3011 with a standard deviation of 0.0042 over 40 seeds, the same under
    OPENBLAS_CORETYPE=Haswell and SandyBridge (scikit-learn's: 0.3027 +-
    0.0043); the bound 0.03 is 7 standard deviations (false failure < 1e-11).
    Thresholded at 0.5 (the old behaviour) it is 0.009."""
    X = np.full((500, 8), 0.3)
    rbm = BernoulliRBM(n_components=2, n_iter=20, learning_rate=0.05, random_state=3).fit(X)
    assert abs(_visible_marginal(rbm) - 0.3) < 0.03
    old = BernoulliRBM(n_components=2, n_iter=20, learning_rate=0.05, binarize=0.5,
                       random_state=3).fit(X)
    assert _visible_marginal(old) < 0.05


def test_public_attributes(digits, fitted):
    theirs = SkRBM(n_components=16, n_iter=1, random_state=0).fit(digits)
    for name in ("components_", "intercept_hidden_", "intercept_visible_", "h_samples_"):
        a, b = getattr(fitted, name), getattr(theirs, name)
        assert a.shape == b.shape and a.dtype == b.dtype, name
    assert fitted.n_features_in_ == 64
    df = _Frame(digits[:50], ["p%d" % i for i in range(64)])
    rbm = BernoulliRBM(n_components=4, n_iter=1, random_state=0).fit(df)
    assert list(rbm.feature_names_in_) == df.columns
    assert list(rbm.get_feature_names_out()) == ["bernoullirbm%d" % i for i in range(4)]


class _Frame:
    """The little of a DataFrame that scikit-learn reads names from (pandas
    is not installed here): an array with string .columns."""

    def __init__(self, a, columns):
        self._a, self.columns = a, columns
        self.shape = a.shape

    def __len__(self):
        return len(self._a)

    def __array__(self, dtype=None):
        return self._a if dtype is None else self._a.astype(dtype)


def test_gibbs_dtypes_and_shapes(digits, fitted):
    theirs = SkRBM(n_components=16, n_iter=1, random_state=0).fit(digits)
    for v in (digits[:7], digits[0]):
        ours, ref = fitted.gibbs(v), theirs.gibbs(v)
        assert ours.dtype == ref.dtype == bool and ours.shape == ref.shape


def test_verbose_lines_in_sklearn_format(digits, capsys):
    line = re.compile(r"^\[BernoulliRBM\] Iteration (\d+), pseudo-likelihood = -?\d+\.\d\d, "
                      r"time = \d+\.\d\ds$")
    BernoulliRBM(n_components=64, n_iter=3, verbose=1, random_state=0).fit(digits)
    ours = capsys.readouterr().out.splitlines()
    SkRBM(n_components=64, n_iter=3, verbose=1, random_state=0).fit(digits)
    theirs = capsys.readouterr().out.splitlines()
    assert len(ours) == len(theirs) == 3
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert line.match(a) and line.match(b) and line.match(a).group(1) == str(i + 1)
    BernoulliRBM(n_components=300, n_iter=1, verbose=1, random_state=0).fit(digits[:50])
    assert line.match(capsys.readouterr().out.strip())


def test_score_samples_is_the_pseudo_likelihood(fitted, digits):
    """score_samples equals scikit-learn's formula with the features it flips,
    is the same in any batch or order, and takes far less than log_likelihood."""
    X = (digits[:100] > 0.5).astype(float)
    got = fitted.score_samples(X)
    j = fitted._flipped(X)
    Xf = X.copy()
    Xf[np.arange(100), j] = 1 - Xf[np.arange(100), j]
    sk = SkRBM(n_components=16)
    for name in ("components_", "intercept_hidden_", "intercept_visible_"):
        setattr(sk, name, getattr(fitted, name))
    want = -64 * np.logaddexp(0, -(sk._free_energy(Xf) - sk._free_energy(X)))
    np.testing.assert_allclose(got, want, rtol=1e-10)
    np.testing.assert_array_equal(fitted.score_samples(X[::-1]), got[::-1])
    np.testing.assert_array_equal(fitted.score_samples(X[10:20]), got[10:20])
    assert np.all(got <= 0)
    # The log-likelihood is one call away, exact here (16 hidden units).
    ll = fitted.log_likelihood(X)
    exact = fitted.model_.log_likelihood(X.astype(np.float32))
    np.testing.assert_allclose(ll, exact, rtol=1e-6)
    with pytest.raises(ValueError, match="0/1"):
        fitted.log_likelihood(digits[:3])


def test_score_samples_speed_order(digits):
    """A 64-256 RBM: the pseudo-likelihood costs what scikit-learn's does
    (400 rows: 11-16 ms over 5 calls, scikit-learn 12-16 ms, on a 2-core
    machine), not the seconds of the first log_likelihood (AIS here). The
    bound, 0.5 s, is 30 times the slowest call measured."""
    rbm = BernoulliRBM(n_components=256, n_iter=1, random_state=0).fit(digits)
    t0 = time.perf_counter()
    rbm.score_samples(digits)
    assert time.perf_counter() - t0 < 0.5
    assert rbm.score_method_ == "ais"


def test_log_z_progress_line(fitted, digits, monkeypatch, capsys):
    rbm = BernoulliRBM(n_components=30, n_iter=1, random_state=0).fit(digits)
    monkeypatch.setattr(_likelihood, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(_likelihood, "AIS_BETAS", 1000)  # AIS (2^30 states): 0.1 s, not 4
    ll = rbm.log_likelihood((digits[:5] > 0.5).astype(float))
    err = capsys.readouterr().err
    assert "computing log Z" in err and "log Z = " in err and np.all(np.isfinite(ll))
    rbm.log_likelihood((digits[:5] > 0.5).astype(float))  # cached: no second line
    assert capsys.readouterr().err == ""


def _interrupt_after(seconds):
    main = threading.main_thread().ident
    t = threading.Timer(seconds, lambda: signal.pthread_kill(main, signal.SIGINT))
    t.start()
    return t


def test_ctrl_c_stops_after_the_current_update(digits, capsys):
    """SIGINT during fit: KeyboardInterrupt after the current update, and a
    usable model (attributes, transform, score_samples); Python's handler back."""
    rbm = BernoulliRBM(n_components=64, n_iter=100000, random_state=0)
    t = _interrupt_after(0.3)
    with pytest.raises(KeyboardInterrupt):
        rbm.fit(digits)
    t.join()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert 1 <= rbm.n_iter_ < 100000
    assert np.all(np.isfinite(rbm.components_)) and np.any(rbm.components_ != 0)
    assert rbm.transform(digits[:3]).shape == (3, 64)
    assert np.all(np.isfinite(rbm.score_samples(digits[:3])))
    assert "Interrupted in iteration" in capsys.readouterr().err
    rbm.partial_fit(digits)  # continues


def test_keyboard_interrupt_raised_in_an_update(digits, monkeypatch):
    """A KeyboardInterrupt raised by Python code (not the signal) inside an
    update leaves the model as after the previous update."""
    import ebm
    calls = []
    real = ebm.Estimator.gradient

    def gradient(self, data, rng, out=None):
        calls.append(1)
        if len(calls) == 7:
            raise KeyboardInterrupt
        return real(self, data, rng, out)

    monkeypatch.setattr(ebm.Estimator, "gradient", gradient)
    rbm = BernoulliRBM(n_components=8, n_iter=5, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        rbm.fit(digits[:100])
    monkeypatch.setattr(ebm.Estimator, "gradient", real)
    assert rbm.n_iter_ == 1 and rbm.transform(digits[:2]).shape == (2, 8)


def test_partial_fit_on_a_stream(digits):
    rbm = BernoulliRBM(n_components=16, random_state=0)
    for i in range(0, 400, 50):
        rbm.partial_fit(digits[i:i + 50])
    assert rbm.n_iter_ == 8 and rbm.transform(digits[:2]).shape == (2, 16)


def test_binarize_stays_an_option(digits):
    a = BernoulliRBM(n_components=8, n_iter=2, binarize=0.5, random_state=0).fit(digits)
    b = BernoulliRBM(n_components=8, n_iter=2, random_state=0).fit(
        (digits > 0.5).astype(float))
    np.testing.assert_array_equal(a.components_, b.components_)


@pytest.mark.skipif(os.environ.get("EBM_TEST_LEVEL", "") != "stat", reason="slow")
def test_digits_pipeline_accuracy_matches_sklearn():
    """EBM_TEST_LEVEL=stat: the digits pipeline reaches scikit-learn's accuracy."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import Pipeline
    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X / 16.0, y, test_size=0.2, random_state=0)
    acc = []
    for seed in range(3):
        p = Pipeline([("rbm", BernoulliRBM(n_components=64, learning_rate=0.06, n_iter=10,
                                           random_state=seed)),
                      ("lr", LogisticRegression(C=6000, max_iter=1000))]).fit(Xtr, ytr)
        acc.append(p.score(Xte, yte))
    assert min(acc) > 0.85


def test_boltzmann_machine_takes_sparse_input_too(digits):
    """The general estimator (here a DBM, binarized) reads CSR as its dense copy."""
    from ebm.sklearn import BoltzmannMachine
    X = (digits[:120] > 0.5).astype(float)
    kw = dict(hidden=(8, 4), n_iter=2, random_state=0)
    a = BoltzmannMachine(**kw).fit(X)
    b = BoltzmannMachine(**kw).fit(sp.csr_matrix(X))
    np.testing.assert_array_equal(a.model_.params(), b.model_.params())
    np.testing.assert_array_equal(a.transform(sp.csr_matrix(X)), a.transform(X))
    np.testing.assert_array_equal(a.score_samples(sp.csr_matrix(X[:5])), a.score_samples(X[:5]))
    assert a.gibbs(sp.csr_matrix(X[:3])).shape == (3, 64) and a.gibbs(X[0]).shape == (64,)
