"""The package's shape: atomic set(**options), calls bound once, renamed
methods (the old names kept one release with a DeprecationWarning)."""
import os
import pickle

import numpy as np
import pytest

import ebm

F32 = np.float32


def _pcd_with_chains(n):
    m = ebm.RBM(6, 4)
    m.init(1, "gaussian", 0.1)
    e = ebm.Estimator(m, "pcd", chains=n)
    e.gradient(np.zeros((3, 6), F32), ebm.Generator(2))
    assert e.num_chains == n
    return e


@pytest.mark.parametrize("bad", [
    {"k": -1},                    # refused by the library (its range)
    {"k": 1.5},                   # refused by the binding (type)
    {"no_such_option": 1},        # unknown name
    {"positive": "sideways"},     # unknown enum value
    {"ladder": [0.5, 1.0]},       # PCD has no ladder (EBM_EUNSUPPORTED)
])
def test_estimator_set_is_all_or_nothing(bad):
    """chains=7 before the bad option would drop the 5 chains (a new count
    starts new chains): they must still be there after the error."""
    e = _pcd_with_chains(5)
    before = e.chains
    with pytest.raises((ValueError, TypeError)):
        e.set(chains=7, burn_in=3, **bad)
    assert e.num_chains == 5
    np.testing.assert_array_equal(e.chains, before)
    assert "burn_in" not in e._options and e._options["chains"] == 5
    e.set(chains=7)  # a good set still applies
    e.gradient(np.zeros((3, 6), F32), ebm.Generator(3))
    assert e.num_chains == 7


def test_sampler_set_is_all_or_nothing():
    s = ebm.Sampler(ebm.RBM(3, 2), "gibbs", iteration=4)
    with pytest.raises(ValueError):
        s.set(iteration=9, cosine=7)  # cosine takes 0 or 1
    assert s.stats["iteration"] == 4
    s.set(iteration=9, cosine=1)
    assert s.stats["iteration"] == 9
    back = pickle.loads(pickle.dumps(s))
    assert back.stats["iteration"] == 9 and back._options["cosine"] == 1


def test_tempering_ladder_in_one_set():
    s = ebm.Sampler(ebm.RBM(3, 2), "tempering")
    s.set(ladder=[0.25, 0.5, 1.0], iteration=2)
    assert s.ladder == [0.25, 0.5, 1.0]
    with pytest.raises(ValueError):
        s.set(ladder=[0.5, 1.0], iteration=-1)
    assert s.ladder == [0.25, 0.5, 1.0] and s.stats["iteration"] == 2
    with pytest.raises(ValueError):
        s.set_ladder([1.0, 0.5])  # not increasing
    assert s.ladder == [0.25, 0.5, 1.0]


def test_calls_are_bound_once():
    """No module looks a C function up by building its name."""
    pkg = os.path.dirname(ebm.__file__)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py") and name not in ("_lib.py", "_abi.py"):
            with open(os.path.join(pkg, name)) as f:
                text = f.read()
            assert "getattr(_C" not in text and "getattr(lib" not in text, name


def test_layer_sample_and_its_old_name():
    m = ebm.RBM(5, 3)
    m.init(1, "gaussian", 1.0)
    x = np.zeros((4, 8), F32)
    new = m.layer_sample(x, 1, ebm.Generator(7))
    with pytest.warns(DeprecationWarning, match="layer_sample"):
        old = m.sample_layer(x, 1, ebm.Generator(7))
    np.testing.assert_array_equal(new, old)


def test_shape_params_and_its_old_name():
    m = ebm.Model([4, 3], "binary", "drelu")
    m.init(1, "gaussian", 1.0)
    assert m.shape_params().shape == (3, 3)
    with pytest.warns(DeprecationWarning, match="shape_params"):
        old = m.shape()
    np.testing.assert_array_equal(old, m.shape_params())


def test_modules_by_concept():
    from ebm import _arrays, _chains, _errors, _generator, _handle, _model  # noqa: F401
    assert ebm.Model.__module__ == "ebm._model"
    assert ebm.Estimator.__module__ == ebm.Sampler.__module__ == "ebm._chains"
    assert ebm.EbmError.__module__ == "ebm._errors"
