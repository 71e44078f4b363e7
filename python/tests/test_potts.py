"""Categorical (Potts) visible units from Python: creation, one-hot states,
exact log-likelihoods that sum to one, a short UCD training that raises the
likelihood, errors, pickling. The exact proofs are in C
(tests/check_potts.c)."""
import itertools
import pickle

import numpy as np
import pytest

import ebm


def one_hot(cats, q):
    """Rows of categories (n, sites) -> one-hot float32 rows (n, sites * q)."""
    cats = np.asarray(cats)
    out = np.zeros((cats.shape[0], cats.shape[1] * q), np.float32)
    for i in range(cats.shape[1]):
        out[np.arange(cats.shape[0]), i * q + cats[:, i]] = 1.0
    return out


@pytest.fixture
def potts():
    m = ebm.Model([3 * 4, 3], "potts", "binary", categories=4)
    m.init(ebm.Generator(1), scale=1.0)
    return m


def test_shape_and_kinds(potts):
    assert potts.units[0] == ebm.Units.POTTS and potts.categories == (4, 1)
    assert potts.sizes == (12, 3)
    with pytest.raises(ebm.EbmError, match="not a multiple of categories"):
        ebm.Model([10, 3], "potts", categories=4)
    with pytest.raises(ValueError, match="categories=q"):
        ebm.Model([12, 3], "potts")
    with pytest.raises(ebm.EbmValueError, match="categories is 0"):
        ebm.Model([12, 3], "potts", categories=0)
    with pytest.raises(ValueError, match="Potts"):
        ebm.Model([12, 3], "binary", categories=4)


def test_likelihood_sums_to_one_and_states_are_checked(potts):
    v = one_hot(list(itertools.product(range(4), repeat=3)), 4)
    ll = potts.log_likelihood(v)
    assert np.isclose(np.exp(ll).sum(), 1.0, atol=1e-9)
    bad = v[:1].copy()
    bad[0, 1] = 1.0  # two ones in site 0
    with pytest.raises(ebm.EbmValueError, match="site 0"):
        potts.log_likelihood(bad)


def test_ucd_training_raises_the_likelihood(potts):
    rs = np.random.default_rng(2)
    # data: sites 0 and 1 agree, site 2 is category 3 mostly
    c0 = rs.integers(0, 4, 200)
    c2 = np.where(rs.random(200) < 0.8, 3, rs.integers(0, 4, 200))
    data = one_hot(np.stack([c0, c0, c2], axis=1), 4)
    before = potts.log_likelihood(data).mean()
    est = ebm.Estimator(potts, "ucd")
    rng = ebm.Generator(3)
    for _ in range(300):
        batch = data[rs.integers(0, 200, 50)]
        potts.axpy_params(0.1, est.gradient(batch, rng))
    after = potts.log_likelihood(data).mean()
    assert after > before + 0.5


def test_pickle_keeps_categories(potts):
    back = pickle.loads(pickle.dumps(potts))
    assert back.categories == (4, 1) and back.to_bytes() == potts.to_bytes()
    assert int.from_bytes(potts.to_bytes()[8:12], "little") == 2
