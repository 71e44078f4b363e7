"""Attack on ebm.sklearn: fitted machines of every kind given inputs in other
dtypes and layouts, bad inputs, copies, a closed model, threads and bad
hyperparameters.

The promises (ebm/sklearn.py, scikit-learn's conventions): any real array
scikit-learn's validation accepts gives what its float64 copy gives and is
never written; what it refuses (complex, NaN, infinities, wrong shapes)
raises ValueError and leaves the fitted machine as it was (its model, its
generators, its attributes); a pickled or deep-copied machine computes what
the original does next; a closed model raises ValueError, not a crash."""
import copy
import pickle
import threading

import numpy as np
import pytest

pytest.importorskip("sklearn")

from ebm.sklearn import BernoulliRBM, BoltzmannMachine  # noqa: E402

F32 = np.float32
CONFIGS = {
    "rbm": lambda: BoltzmannMachine(hidden=(3,), n_iter=2, random_state=0),
    "spin": lambda: BoltzmannMachine(hidden=(3,), units="spin", n_iter=2, random_state=0),
    "dbm": lambda: BoltzmannMachine(hidden=(3, 2), n_iter=2, random_state=0),
    "grbm": lambda: BoltzmannMachine(hidden=(3,), visible="gaussian", estimator="grbm_cd",
                                     learning_rate=0.01, n_iter=2, random_state=0),
    "bernoulli": lambda: BernoulliRBM(n_components=3, n_iter=2, random_state=0),
}


def _data(config, n=12, seed=0):
    rs = np.random.default_rng(seed)
    if config == "grbm":
        return rs.normal(size=(n, 5))
    return (rs.random((n, 5)) < 0.5).astype(np.float64)


@pytest.fixture(scope="module")
def fitted():
    return {c: make().fit(_data(c)) for c, make in CONFIGS.items()}


def _state(est):
    """Everything a refused call must leave as it was."""
    return (est.model_.to_bytes(), est._rng.state.tobytes(), est._sample_rng.state.tobytes(),
            est._ebm_estimator.chains.tobytes(), est.n_iter_, est.n_features_in_,
            est.components_.tobytes())


# method -> call(estimator, X); gibbs and partial_fit move the machine, so they
# run on deep copies
METHODS = {
    "transform": lambda est, X: est.transform(X),
    "score_samples": lambda est, X: est.score_samples(X),
    "score": lambda est, X: est.score(X),
    "gibbs": lambda est, X: copy.deepcopy(est).gibbs(X),
    "partial_fit": lambda est, X: copy.deepcopy(est).partial_fit(X).model_.params(),
}


# form -> X in that form (t: the attack helpers)
FORMS = {
    "float32": lambda t, X: X.astype(F32),
    "float16": lambda t, X: X.astype(np.float16),
    "int8": lambda t, X: X.astype(np.int8),
    "bool": lambda t, X: X > 0.5,
    "big_endian": lambda t, X: X.astype(">f8"),
    "fortran": lambda t, X: np.asfortranarray(X),
    "strided": lambda t, X: np.repeat(X, 2, axis=1)[:, ::2],
    "reversed_rows": lambda t, X: X[::-1].copy()[::-1],
    "unaligned": lambda t, X: t.unaligned(X),
    "readonly": lambda t, X: t.readonly(X),
    "object": lambda t, X: X.astype(object),
    "list": lambda t, X: X.tolist(),
}


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("config", list(CONFIGS))
def test_accepted_input_reads_as_its_float64_copy(fitted, attack, config, method, form):
    est = fitted[config]
    X = FORMS[form](attack, _data(config, seed=1))
    ref = np.array(X, dtype=np.float64, order="C")
    keep = copy.deepcopy(X)
    before = _state(est)
    got, want = METHODS[method](est, X), METHODS[method](est, ref)
    if getattr(got, "dtype", None) == np.float32:  # computed in float64, returned in X's dtype
        want = np.asarray(want).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(got, np.float64), np.asarray(want, np.float64))
    if isinstance(X, np.ndarray):
        np.testing.assert_array_equal(X, keep)
        assert X.dtype == keep.dtype
    assert _state(est) == before


BAD = {
    "complex": (lambda X: X.astype(complex), "Complex"),
    "nan": (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 7, np.nan, X), "NaN"),
    "inf": (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 7, np.inf, X), "infinity"),
    "one_row_1d": (lambda X: X[0], "2D"),
    "3d": (lambda X: X[None], "dim 3"),
    "no_rows": (lambda X: X[:0], "0 sample"),
    "extra_feature": (lambda X: np.hstack([X, X[:, :1]]), "features"),
    "missing_feature": (lambda X: X[:, :-1], "features"),
    "strings": (lambda X: np.full(X.shape, "a"), "string|float"),
}


@pytest.mark.parametrize("bad", list(BAD))
@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("config", list(CONFIGS))
def test_refused_input_changes_nothing(fitted, config, method, bad):
    if bad == "one_row_1d" and method == "gibbs":
        pytest.skip("gibbs takes one row as a 1-D array, as scikit-learn's does")
    est = fitted[config]
    make, match = BAD[bad]
    X = make(_data(config, seed=1))
    before = _state(est)
    with pytest.raises(ValueError, match=match):
        {**METHODS, "gibbs": lambda e, X: e.gibbs(X),
         "partial_fit": lambda e, X: e.partial_fit(X)}[method](est, X)
    assert _state(est) == before


@pytest.mark.parametrize("bad", ["complex", "nan", "inf", "3d", "no_rows", "strings"])
@pytest.mark.parametrize("config", list(CONFIGS))
def test_refused_refit_changes_nothing(fitted, config, bad):
    est = copy.deepcopy(fitted[config])
    before = _state(est)
    with pytest.raises(ValueError):
        est.fit(BAD[bad][0](_data(config, seed=1)))
    assert _state(est) == before


HOW = {"pickle": lambda o: pickle.loads(pickle.dumps(o)), "deepcopy": copy.deepcopy}


@pytest.mark.parametrize("how", list(HOW))
@pytest.mark.parametrize("config", list(CONFIGS))
def test_copy_continues_as_the_original(fitted, config, how):
    est = copy.deepcopy(fitted[config])
    c = HOW[how](est)
    assert c.model_ is not est.model_ and c._ebm_estimator.model is c.model_
    X = _data(config, seed=2)
    np.testing.assert_array_equal(c.transform(X), est.transform(X))
    np.testing.assert_array_equal(c.score_samples(X), est.score_samples(X))
    np.testing.assert_array_equal(c.gibbs(X), est.gibbs(X))
    np.testing.assert_array_equal(c.sample(3, n_steps=2), est.sample(3, n_steps=2))
    c.partial_fit(X)
    est.partial_fit(X)
    assert c.model_.to_bytes() == est.model_.to_bytes()
    c.model_.close()
    est.transform(X)


CLOSED_CALLS = {
    **{m: f for m, f in METHODS.items() if m not in ("gibbs", "partial_fit")},
    "gibbs": lambda est, X: est.gibbs(X),
    "partial_fit": lambda est, X: est.partial_fit(X),
    "sample": lambda est, X: est.sample(2, n_steps=1),
    "pickle": lambda est, X: pickle.dumps(est),
    "deepcopy": lambda est, X: copy.deepcopy(est),
}


@pytest.mark.parametrize("call", list(CLOSED_CALLS))
@pytest.mark.parametrize("config", list(CONFIGS))
def test_closed_model_refuses(fitted, config, call):
    est = copy.deepcopy(fitted[config])
    est._log_z = None  # score_samples must reach the model
    est.model_.close()
    with pytest.raises(ValueError, match="closed"):
        CLOSED_CALLS[call](est, _data(config, seed=1))


@pytest.mark.parametrize("config", list(CONFIGS))
def test_one_machine_from_threads(fitted, config):
    """transform and score_samples from three threads give the serial results;
    gibbs from them shares one generator, whose calls are serialised."""
    est = copy.deepcopy(fitted[config])
    X = [_data(config, seed=10 + i) for i in range(3)]
    want = [(est.transform(x), est.score_samples(x)) for x in X]
    got, errors = {}, []

    def work(i):
        try:
            for _ in range(3):
                got[i] = (est.transform(X[i]), est.score_samples(X[i]))
                est.gibbs(X[i])
        except BaseException as e:  # noqa: B902 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i in range(3):
        np.testing.assert_array_equal(got[i][0], want[i][0])
        np.testing.assert_array_equal(got[i][1], want[i][1])


BAD_PARAMS = {
    "hidden_huge": (dict(hidden=(2 ** 70,)), str(2 ** 70)),
    "hidden_fraction": (dict(hidden=(1.5,)), "hidden"),
    "hidden_str": (dict(hidden=("3",)), "hidden"),
    "hidden_none": (dict(hidden=None), "hidden"),
    "batch_size_fraction": (dict(batch_size=1.5), "batch_size"),
    "n_iter_fraction": (dict(n_iter=1.5), "n_iter"),
    "learning_rate_str": (dict(learning_rate="0.1"), "learning_rate"),
    "learning_rate_nan": (dict(learning_rate=float("nan")), "learning_rate"),
    "learning_rate_inf": (dict(learning_rate=float("inf")), "learning_rate"),
    "learning_rate_bool": (dict(learning_rate=True), "learning_rate"),
    "random_state_fraction": (dict(random_state=1.5), "random_state|RandomState"),
    "random_state_negative": (dict(random_state=-1), "random_state"),
    "random_state_2^64": (dict(random_state=2 ** 64), "random_state"),
    "init_scale_nan": (dict(init_scale=float("nan")), "init_scale"),
    "init_scale_str": (dict(init_scale="0.1"), "init_scale"),
    "binarize_nan": (dict(binarize=float("nan")), "binarize"),
    "binarize_complex": (dict(binarize=0.5j), "binarize"),
    "options_k_fraction": (dict(estimator_options={"k": 1.5}), r"\bk\b"),
    "options_k_str": (dict(estimator_options={"k": "2"}), r"\bk\b"),
    "options_k_huge": (dict(estimator_options={"k": 2 ** 70}), r"\bk\b"),
    "options_k_negative": (dict(estimator_options={"k": -1}), "_K"),
    "options_coupling_fraction": (dict(estimator_options={"coupling": 1.5}), "coupling"),
    "options_unknown": (dict(estimator_options={"nope": 1}), "nope"),
}


@pytest.mark.parametrize("bad", list(BAD_PARAMS))
def test_bad_hyperparameter_refused_by_name(fitted, bad):
    """A machine set to a bad value raises, naming it, and keeps its fit."""
    params, match = BAD_PARAMS[bad]
    est = copy.deepcopy(fitted["rbm"])
    before = _state(est)
    est.set_params(**params)
    with pytest.raises((ValueError, TypeError), match=match):
        est.fit(_data("rbm"))
    assert _state(est) == before


@pytest.mark.parametrize("n", [0, -1, 1.5, "3", 2 ** 70])
def test_bernoulli_n_components_refused(n):
    with pytest.raises(ValueError, match="n_components"):
        BernoulliRBM(n_components=n).fit(_data("rbm"))


@pytest.mark.parametrize("args", [(-1,), (1.5,), ("2",), (2, -1), (2, 1.5), (2 ** 70,)],
                         ids=["negative", "fraction", "str", "negative_steps",
                              "fraction_steps", "huge"])
def test_sample_refuses_bad_counts(fitted, args):
    est = copy.deepcopy(fitted["rbm"])
    before = _state(est)
    with pytest.raises(ValueError, match="n_samples|n_steps|%s" % 2 ** 70):
        est.sample(*args)
    assert _state(est) == before
